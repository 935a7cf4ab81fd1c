"""The floor of a replicated hand-off on this machine, measured beside the hand-off itself in one
run (issue 51 item 3; bench/RESULTS.md "The floor of a replicated hand-off").

A hand-off is the next holder's grant received minus the previous holder's release sent
(bench/workloads.py). With every client on the partition's owner it needs at least: the release
over HTTP to the owner and the grant over HTTP back to the waiter (together one HTTP round trip),
and the batch's round trip to the replica (one transport round trip, with the replica's fsync; the
owner's own fsync runs at the same time). Through any node, the release and the grant may each
cross one transport hop more. Each part is measured on its own here, on the same three nodes and
the same disk, with the same client code as the bench:

- `tcp`: a 64-byte ping-pong over a kept-alive loopback TCP connection to an echo process (the
  machine's floor for any round trip, no server work);
- `http`: a realtime GET of a missing document of a one-shard index through the node that holds
  the shard, over the bench's HTTP connection: Elasticsearch's floor for a request (HTTP, REST
  dispatch, a transport action on the same node; the bench's "ES floor" peer);
- `transport`: the same GET through another node, minus `http`: one transport round trip with
  its thread hops;
- `fsync`: a 128-byte append and `fdatasync` to a file in the nodes' folder;
- `replication`: the owner's own count of its batches' round trips over the contended run
  (docs/API.md `GET /_locks/_node/diagnostics`, `replication.round_trip_ms`);
- `contended-16`: the bench's workload (16 clients, one key, 1 ms hold) with every client on the
  owner and spread over the nodes, after a JIT warm-up.

Usage: python3 bench/floor.py [--samples 3000] [--duration 10] [--jit-warmup 60] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers as P  # noqa: E402
from run import WORKLOADS  # noqa: E402
from workloads import pct, run as run_workload  # noqa: E402

ECHO = """
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while True:
    d = c.recv(65536)
    if not d:
        break
    c.sendall(d)
"""

# The bench's own contended-16 (bench/run.py), so that the hand-off beside the floor is the one
# the peers' tables show.
CONTENDED = next(w for w in WORKLOADS if w.name == "contended-16")


def percentiles(samples: list[float]) -> dict:
    """p50 and p99 of `samples` (seconds) in milliseconds."""
    return {"p50_ms": round(1000 * pct(samples, 50), 3), "p99_ms": round(1000 * pct(samples, 99), 3),
            "samples": len(samples)}


def timed(fn, samples: int) -> list[float]:
    """`fn` run `samples` times unmeasured (the JIT of the nodes' path), then `samples` times, each timed."""
    for _ in range(samples):
        fn()
    out = []
    for _ in range(samples):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def tcp_round_trips(samples: int) -> list[float]:
    echo = subprocess.Popen([sys.executable, "-c", ECHO], stdout=subprocess.PIPE, text=True)
    try:
        port = int(echo.stdout.readline())
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            msg = b"x" * 64

            def ping():
                s.sendall(msg)
                got = 0
                while got < len(msg):
                    got += len(s.recv(65536))

            return timed(ping, samples)
    finally:
        echo.kill()
        echo.wait()


def fsync_appends(folder: Path, samples: int) -> list[float]:
    path = folder / "floor-fsync.log"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        record = b"r" * 128

        def append():
            os.write(fd, record)
            os.fdatasync(fd)

        return timed(append, samples)
    finally:
        os.close(fd)
        path.unlink()


def get_on(http: P.Http, path: str, expect: int):
    def call():
        status, body = http.call("GET", path)
        if status != expect:
            raise P.BenchError(f"GET {path}: {status} {body}")
    return call


def local_and_remote_gets(cluster, samples: int) -> tuple[list[float], list[float]]:
    """A missing document's realtime GET of a one-shard index on the last node, answered by that
    node's shard: through the last node itself, and through the first (one transport round trip)."""
    near, far = cluster.nodes[0], cluster.nodes[-1]
    local, remote = P.Http(far.http_port), P.Http(near.http_port)
    try:
        status, body = local.call("PUT", "/floor-hop", {"settings": {
            "number_of_shards": 1, "number_of_replicas": 0,
            "index.routing.allocation.require._name": far.name}})
        if status != 200:
            raise P.BenchError(f"PUT /floor-hop: {status} {body}")
        far.get("/_cluster/health/floor-hop?wait_for_status=green&timeout=30s", timeout=35)
        return (timed(get_on(local, "/floor-hop/_doc/missing", 404), samples),
                timed(get_on(remote, "/floor-hop/_doc/missing", 404), samples))
    finally:
        local.call("DELETE", "/floor-hop")
        local.close()
        remote.close()


def contended(peer: P.Plugin3, route: str, duration: float, log) -> dict:
    peer.route = route
    figures = run_workload(peer, CONTENDED, duration, 2.0, f"floor-{route}", log=log)
    figures.update(peer.after_workload())
    return {k: figures.get(k) for k in ("grants_per_s", "handoff_p50_ms", "handoff_p99_ms",
                                        "replication_round_trip_p50_ms", "replication_round_trip_p99_ms",
                                        "mutual_exclusion_violations", "errors")}


def measure(args, log=print) -> dict:
    peer = P.Plugin3()
    peer.start(None, log=log)
    try:
        cluster = peer.cluster
        log(f"JIT warm-up: {CONTENDED.name} for {args.jit_warmup} s ...")
        peer.route = "spread"
        run_workload(peer, CONTENDED, args.jit_warmup, 1.0, "floor-warm", log=log)
        result = {"plugin": peer.version(), "samples": args.samples, "duration_s": args.duration}
        result["tcp"] = percentiles(tcp_round_trips(args.samples))
        local, remote = local_and_remote_gets(cluster, args.samples)
        result["http"] = percentiles(local)
        result["transport"] = {"through_another_node": percentiles(remote),
                               "p50_ms": round(1000 * (pct(remote, 50) - pct(local, 50)), 3)}
        result["fsync"] = percentiles(fsync_appends(cluster.nodes[0].home.parent, args.samples))
        for route in ("owner", "spread"):
            log(f"{CONTENDED.name}, route {route}, {args.duration} s ...")
            result[f"contended_{route}"] = contended(peer, route, args.duration, log)
        return result
    finally:
        peer.stop()


def floors(r: dict) -> dict:
    """The hand-off's floor through the owner (one HTTP round trip, one transport round trip, one
    fsync) and through any node (one transport round trip more), from the parts' medians."""
    owner = r["http"]["p50_ms"] + r["transport"]["p50_ms"] + r["fsync"]["p50_ms"]
    return {"owner_ms": round(owner, 3), "any_node_ms": round(owner + r["transport"]["p50_ms"], 3)}


def report(r: dict) -> str:
    f = floors(r)
    o, s = r["contended_owner"], r["contended_spread"]
    rows = [
        ("loopback TCP round trip, 64 B (p50 / p99)", f"{r['tcp']['p50_ms']} / {r['tcp']['p99_ms']} ms"),
        ("HTTP request to the shard's node: GET of a missing document (p50 / p99)",
         f"{r['http']['p50_ms']} / {r['http']['p99_ms']} ms"),
        ("one transport round trip: the same GET through another node, minus the above (p50)",
         f"{r['transport']['p50_ms']} ms ({r['transport']['through_another_node']['p50_ms']} - {r['http']['p50_ms']})"),
        ("128 B append + fdatasync in the nodes' folder (p50 / p99)",
         f"{r['fsync']['p50_ms']} / {r['fsync']['p99_ms']} ms"),
        ("floor of a hand-off through the owner (HTTP + transport + fsync)", f"**{f['owner_ms']} ms**"),
        ("floor through any node (one transport round trip more)", f"**{f['any_node_ms']} ms**"),
        ("contended-16 through the owner: hand-off p50 / p99, critical sections/s",
         f"**{o['handoff_p50_ms']:.2f}** / {o['handoff_p99_ms']:.2f} ms, {o['grants_per_s']:.0f}"),
        ("the owner's batch round trip over that run (p50 / p99)",
         f"{o.get('replication_round_trip_p50_ms')} / {o.get('replication_round_trip_p99_ms')} ms"),
        ("contended-16 spread over the nodes: hand-off p50 / p99, critical sections/s",
         f"**{s['handoff_p50_ms']:.2f}** / {s['handoff_p99_ms']:.2f} ms, {s['grants_per_s']:.0f}"),
        ("the owner's batch round trip over that run (p50 / p99)",
         f"{s.get('replication_round_trip_p50_ms')} / {s.get('replication_round_trip_p99_ms')} ms"),
    ]
    lines = [f"plugin: {r['plugin']}", "", "| measured | figure |", "|---|---|"]
    lines += [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=3000)
    ap.add_argument("--duration", type=float, default=10.0, help="seconds of each contended run")
    ap.add_argument("--jit-warmup", type=float, default=60.0, help="seconds of contended load first")
    ap.add_argument("--json", help="write the figures there too")
    args = ap.parse_args()
    if P.esnode.extra_java_options():
        ap.error(f"${P.esnode.NODE_JAVA_OPTS_ENV} is set: unset it for figures")
    r = measure(args)
    for route in ("owner", "spread"):
        c = r[f"contended_{route}"]
        if c["errors"] or c["mutual_exclusion_violations"]:
            print(f"contended run ({route}) was not clean: {c}", file=sys.stderr)
            return 1
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2))
    print(report(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
