"""Smoke tests of the benchmark harness (issues 6 and 12): `python3 bench/run.py --quick` must
run every peer and workload end to end, stop everything it started and write its JSON and plot,
so the harness cannot rot (the in-process criterion and JMH benchmarks included); so must
`--replicated`, the three-server comparison. They use the plugin zip as `make java-test` built it
(`--no-build`): `make integration-test` runs them beside other tests that install that zip. The
figures themselves are not checked here (a quick run on a shared machine is noise); only that
each workload granted locks, without errors and without two holders at once."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import node as esnode  # scripts/, on the path from tests/conftest.py

ROOT = Path(__file__).resolve().parent.parent

# The harness is the same whatever Elasticsearch it starts: it is checked once per CI run, on the
# default version (`make integration-test` runs this folder once per version).
pytestmark = pytest.mark.skipif(esnode.es_version() != esnode.default_es_version(),
                                reason="the benchmark harness is smoke-tested on the default version only")


# Shorter than --quick's own 1.5 s per workload (0.5 s warm-up, 1 s JIT warm-up): the test checks
# that every workload grants, not its figures, and `make test` runs it beside four lanes of tests
# on two cores, where every second of load it makes is taken from them.
SMOKE = ("--duration", "1", "--warmup", "0.25", "--jit-warmup", "0.5")


def run_bench(script: str, *args: str, timeout: float, out: Path) -> subprocess.CompletedProcess:
    """`python3 bench/<script> <args>`, its output kept in `out`. One that outlives `timeout` is
    asked for every thread's stack (SIGUSR1: bench/run.py and bench/thread_cpu.py register
    faulthandler for it), stopped with SIGTERM
    (it stops what it started) and the test fails with the end of what it printed: a hang shows
    where it hangs instead of a timeout with its output cut away."""
    stdout, stderr = out / f"{script}.out", out / f"{script}.err"
    with stdout.open("w") as o, stderr.open("w") as e:
        proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT,
                                stdout=o, stderr=e, text=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)
            time.sleep(2)  # the stacks written before the stop's own output
            proc.terminate()
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            pytest.fail(f"bench/{script} still ran after {timeout:.0f} s; its output:\n"
                        f"{stdout.read_text()[-6000:]}\n{stderr.read_text()[-12000:]}")
    return subprocess.CompletedProcess(proc.args, code, stdout.read_text(), stderr.read_text())


@pytest.mark.slow
def test_bench_quick_runs_every_peer_and_workload(tmp_path):
    proc = run_bench("run.py", "--quick", *SMOKE, "--no-build", "--out", str(tmp_path), timeout=900, out=tmp_path)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    [result] = list(tmp_path.glob("*.json"))
    data = json.loads(result.read_text())
    assert [p.suffix for p in tmp_path.glob("*.png")] == [".png"]
    workloads = data["workloads"]
    peers = {"plugin", "doc-recipe", "zookeeper", "etcd", "redis"}
    floor = {"uncontended-1", "uncontended-64"}
    for name in ("uncontended-1", "uncontended-16", "uncontended-64", "contended-16",
                 "contended-64"):
        assert set(workloads[name]) == peers | ({"es-floor"} if name in floor else set()), name
        for peer, r in workloads[name].items():
            assert not r["errors"], (name, peer, r)
            # Only grants whose acquire began inside the window count. Under contention the polling
            # document recipe may count none in the smoke run's 1 s: every client can still be
            # polling from the warm-up (the starvation the benchmark is there to show; seen once
            # on a loaded machine); and 16 clients of it, each indexing and deleting a document of
            # its own, got none begun and answered in that second on a loaded CI machine (stop
            # 54). Every other peer and workload grants, and the document recipe with one client.
            starved = name != "uncontended-1" and peer == "doc-recipe" and r["grants"] == 0
            assert r["grants"] > 0 or starved, (name, peer, r)
            if name.startswith("contended"):
                assert r["mutual_exclusion_violations"] == 0, (name, peer)
                assert starved or r["handoff_p50_ms"] is not None, (name, peer)
    # issue 15: a semaphore permit on the peers that have a semaphore (kazoo's recipe for ZooKeeper)
    assert set(workloads["semaphore-1"]) == {"plugin", "zookeeper"}
    assert all(r["grants"] > 0 and not r["errors"] for r in workloads["semaphore-1"].values())
    mixed = workloads["mixed-priority"]
    assert {"plugin", "zookeeper-prefix"} <= set(mixed)
    for peer, r in mixed.items():
        assert r["fg_grants"] > 0 and r["bg_grants"] > 0 and not r["errors"], (peer, r)
    # the plugin answers a grant with one request and a release with one: no polling
    assert workloads["contended-64"]["plugin"]["requests_per_grant"] == pytest.approx(2.0, abs=0.05)
    # the in-process benchmarks ran too: the lock core (criterion) and the JNI bridge (JMH)
    inproc = data["in_process"]
    assert inproc["criterion"]["uncontended/table"]["per_s"] > 0
    assert set(inproc["jmh"]) == {"jniAcquireRelease", "jniVersionCall", "chmAcquireRelease"}
    assert all(b["ns_per_op"] > 0 for b in inproc["jmh"].values())
    # everything it started is gone: nothing of the run still listens
    assert "eslm-bench" not in subprocess.run(["ps", "-eo", "args"], capture_output=True,
                                              text=True).stdout


@pytest.mark.slow
def test_bench_replicated_quick_runs_the_three_server_peers(tmp_path):
    """`bench/run.py --replicated --quick` (issue 12): the plugin on three nodes with one replica,
    a ZooKeeper ensemble of three and an etcd cluster of three, beside their single servers (the
    plugin's twice: default durability and `locks.durability: memory`, two nodes of their own),
    on uncontended-1 and contended-16; a semaphore permit (issue 15) on the peers that have one;
    election failover on the three-server peers, one kill -9 of each kind; everything stopped at
    the end."""
    proc = run_bench("run.py", "--quick", *SMOKE, "--replicated", "--no-build", "--out", str(tmp_path),
                     timeout=900, out=tmp_path)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    [result] = list(tmp_path.glob("*-replicated.json"))
    data = json.loads(result.read_text())
    peers = {"plugin-3", "zookeeper-3", "etcd-3", "plugin", "plugin-memory", "zookeeper", "etcd"}
    assert set(data["workloads"]) == {"uncontended-1", "semaphore-1", "contended-16",
                                      "election-failover", "election-owner-loss"}
    for name, expected in (("uncontended-1", peers), ("contended-16", peers),
                           ("semaphore-1", peers - {"etcd-3", "etcd"})):
        by_peer = data["workloads"][name]
        assert set(by_peer) == expected, name
        for peer, r in by_peer.items():
            assert r["grants"] > 0 and not r["errors"], (name, peer, r)
    for name in ("election-failover", "election-owner-loss"):
        assert set(data["workloads"][name]) == {"plugin-3", "zookeeper-3", "etcd-3"}, name
        for peer, r in data["workloads"][name].items():
            assert not r["errors"] and r["repetitions"] == 1, (name, peer, r)
            [sample] = r["samples"]
            assert 0 < sample["failover_ms"] < 1000 * (r["lease_s"] + 30), (name, peer, sample)
            if peer != "zookeeper-3":
                # the dead leader's lease outlives its server (the plugin replicates it with the
                # grant, etcd keeps it on the Raft leader): nobody leads before it runs out,
                # counted from the last renew's request. Slack: the plugin's core counts whole
                # milliseconds (a lease may end up to 1 ms before its exact instant), etcd's
                # keep-alive answers its TTL rounded. ZooKeeper's session may end earlier (its
                # follower died with the last touches it had not passed on; bench/README.md)
                slack_ms = 2 if peer == "plugin-3" else 10
                assert sample["lease_left_from_request_ms"] - slack_ms <= sample["failover_ms"], \
                    (name, peer, sample)
            assert r["survived"] == "1/1", (name, peer, r)
    for peer, r in data["workloads"]["contended-16"].items():
        assert r["mutual_exclusion_violations"] == 0 and r["handoff_p50_ms"] is not None, peer
        # the owner's own round trips (diagnostics) for the replicating plugin peers only
        replicates = peer in ("plugin-3", "plugin")
        assert (r.get("replication_round_trip_p50_ms", 0) > 0) == replicates, (peer, r)
    assert "| contended, 16: a batch's round trip to every copy, p50" in proc.stdout
    assert "replica on" in data["versions"]["plugin-3"]
    assert "ensemble of 3" in data["versions"]["zookeeper-3"]
    assert "cluster of 3" in data["versions"]["etcd-3"]
    assert "locks.durability: replicated" in data["versions"]["plugin"]
    assert "locks.durability: memory" in data["versions"]["plugin-memory"]
    assert "| plugin, 3 nodes |" in proc.stdout and "| plugin, memory |" in proc.stdout
    assert "| semaphore (1 permit of 4), 1 client" in proc.stdout
    assert "| election, leader's node killed: new leader observed after, p50 (ms) |" in proc.stdout
    assert "eslm-bench" not in subprocess.run(["ps", "-eo", "args"], capture_output=True,
                                              text=True).stdout


@pytest.mark.slow
def test_bench_owner_route_puts_every_client_on_the_owner_or_leader(tmp_path):
    """`--three-node-route owner` (bench/README.md): the plugin's clients all go to the owner of
    partition 0 and the ensembles' clients all to their leader, as each versions line says; the
    contended workload still grants with one holder at a time. Uses the zip as built."""
    proc = run_bench("run.py", "--quick", *SMOKE, "--no-build", "--no-inprocess", "--peers", "plugin-3,zookeeper-3,etcd-3",
                     "--workloads", "contended-16", "--three-node-route", "owner", "--out", str(tmp_path),
                     timeout=600, out=tmp_path)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    [result] = list(tmp_path.glob("*-replicated.json"))
    data = json.loads(result.read_text())
    assert data["three_node_route"] == "owner"
    assert data["jvm_warmup_s"] == 1.0  # 0.5 s on many keys, then 0.5 s on one key (SMOKE)
    versions = data["versions"]
    assert "every client to the owner node-" in versions["plugin-3"], versions
    assert "every client connects to the leader" in versions["zookeeper-3"], versions
    assert "every client talks to the leader" in versions["etcd-3"], versions
    for peer, r in data["workloads"]["contended-16"].items():
        assert r["grants"] > 0 and not r["errors"], (peer, r)
        assert r["mutual_exclusion_violations"] == 0, peer


@pytest.mark.slow
def test_thread_cpu_prints_windows_and_cpu_by_thread_pool(tmp_path):
    """`bench/thread_cpu.py` (bench/README.md): a window's figures, then each node's CPU per grant
    split by the pools named in the JVM's thread dump, the owner's replication pool among them."""
    proc = run_bench("thread_cpu.py", "--windows", "2", "--window-s", "2", timeout=600, out=tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    assert re.search(r"^window 2: \d+ critical sections/s, hand-off p50 [\d.]+ ms$", proc.stdout, re.M), proc.stdout
    assert re.search(r"^the owner's batch round trip to every copy .*: p50 [\d.]+ ms, p99 [\d.]+ ms$",
                     proc.stdout, re.M), proc.stdout
    nodes = re.findall(r"^  (node-\d): [\d.]+ in total; (.*)$", proc.stdout, re.M)
    assert sorted(n for n, _ in nodes) == ["node-0", "node-1", "node-2"], proc.stdout
    pools = " ".join(p for _, p in nodes)
    assert "transport_worker" in pools and "locks_replication" in pools, proc.stdout
    assert "eslm-bench" not in subprocess.run(["ps", "-eo", "args"], capture_output=True,
                                              text=True).stdout
