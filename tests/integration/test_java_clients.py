"""The Java client's and the ShedLock provider's own JUnit tests (clients/, issue 14) against a
real node of this module's own (ShedLock's fuzz test takes a few keys thousands of times, which
would crowd the shared node's hot-keys ranking that test_rest_api.py checks): `mvn verify` with the node's URL, then the surefire reports must show every
expected test class with its number of tests run, none failed, errored or skipped. The JUnit tests
fail by themselves when no node URL is given, so a green run here means they talked to this node."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import node as esnode
from cluster_kit import COPIES_MAY_SIT_ON_THE_MASTER, OneNode, ThreeNodes, http, live, move_partition, owner_of_partition, settled

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"

# Test classes and their number of tests, per module: a class or test that silently stopped
# running fails here.
EXPECTED = {
    "java": {
        "org.eslm.client.LockClientTest": 11,
        "org.eslm.client.WatchdogTest": 4,
        "org.eslm.client.LossWatchTest": 2,
        "org.eslm.client.AsyncTest": 2,
        "org.eslm.client.TokenLockTest": 3,
        "org.eslm.client.SessionTest": 2,
        "org.eslm.client.MultiLockTest": 3,
        "org.eslm.client.ServerErrorsTest": 1,
        "org.eslm.client.SemaphoreTest": 4,
        "org.eslm.client.ElectionTest": 5,
        # The same tests over Rest5Client (the cancellation tests left out: README "Transports").
        "org.eslm.client.LockClientRest5Test": 11,
        "org.eslm.client.WatchdogRest5Test": 4,
        "org.eslm.client.LossWatchRest5Test": 2,
        "org.eslm.client.AsyncRest5Test": 1,
        "org.eslm.client.TokenLockRest5Test": 2,
        "org.eslm.client.SessionRest5Test": 2,
        "org.eslm.client.MultiLockRest5Test": 3,
        "org.eslm.client.SemaphoreRest5Test": 4,
        "org.eslm.client.ElectionRest5Test": 5,
        # Issue 27: one owner per acquisition, late grants, no answer over both transports.
        "org.eslm.client.OwnersTest": 3,
        "org.eslm.client.LateGrantTest": 2,
        "org.eslm.client.TransportFailureTest": 2,
        # Issue 30: fenced writes and optimistic updates; issue 48: fenced changes.
        "org.eslm.client.DocumentsTest": 7,
        "org.eslm.client.example.ReadmeExampleTest": 3,
        # Issue 38: acquires wait until granted, in rounds past the server's locks.wait.max.
        "org.eslm.client.BlockingTest": 3,
        "org.eslm.client.ThreadLockTest": 3,
        # Issue 38: groups.
        "org.eslm.client.GroupTest": 3,
        # Issue 50: the listener hook and the client's state (the Spring Boot starter's meters and health).
        "org.eslm.client.ListenerTest": 6,
        "org.eslm.client.ListenerRest5Test": 6,
        # Issue 49 item 5: close() releases what the client holds.
        "org.eslm.client.CloseTest": 2,
        "org.eslm.client.CloseRest5Test": 2,
        # Issue 49 item 5: ReadWriteLock and downgrade.
        "org.eslm.client.ReadWriteLockTest": 4,
        "org.eslm.client.ReadWriteLockRest5Test": 4,
    },
    "shedlock": {
        "org.eslm.shedlock.ShedLockContractTest": 5,
        "org.eslm.shedlock.ShedLockLongLeaseTest": 2,
        # ShedLock's own suite for extensible providers (shedlock-test-support 6.6.1 on core 7.x).
        "org.eslm.shedlock.ShedLockSupportIntegrationTest": 15,
    },
    "shedlock-spring-example": {
        "org.eslm.shedlock.example.SpringSchedulerExampleTest": 2,
    },
    # Issue 38: Spring Integration's LockRegistry.
    "spring-integration": {
        "org.eslm.spring.LockRegistryTest": 6,
    },
    "spring-integration-example": {
        "org.eslm.spring.example.InvoiceNumbersExampleTest": 2,
    },
    # Issue 50: the Spring Boot starter (auto-configuration, health, meters).
    "spring-boot-starter": {
        "org.eslm.spring.boot.AutoConfigurationTest": 12,
        "org.eslm.spring.boot.AgainstTheNodeTest": 6,
        "org.eslm.spring.boot.example.ReadmeExampleTest": 2,
    },
}


def run_maven(url: str, *extra: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """`mvn -B -q -f clients/pom.xml verify -Deslm.url=<url>` with scripts/find-jdk's JDK; stale
    surefire reports are removed first so only this run's are read."""
    for module in EXPECTED:
        shutil.rmtree(CLIENTS / module / "target" / "surefire-reports", ignore_errors=True)
    return subprocess.run(
        ["mvn", "-B", "-q", "-f", str(CLIENTS / "pom.xml"), "verify", f"-Deslm.url={url}", *extra],
        env=esnode.maven_env(), capture_output=True, text=True, timeout=timeout,
    )


def surefire_results(module: str) -> dict[str, dict[str, int]]:
    """Per test class of `module`: tests, failures, errors, skipped, from its surefire XML."""
    results = {}
    for report in sorted((CLIENTS / module / "target" / "surefire-reports").glob("TEST-*.xml")):
        suite = ET.parse(report).getroot()
        results[suite.get("name")] = {k: int(suite.get(k)) for k in ("tests", "failures", "errors", "skipped")}
    return results


ONE_NODE = OneNode("eslm-it-java-clients")


def test_java_client_and_shedlock_provider_tests_pass_against_a_real_node(own_node):
    done = run_maven(own_node.url)
    assert done.returncode == 0, f"mvn verify failed:\n{done.stdout[-6000:]}\n{done.stderr[-6000:]}"
    for module, classes in EXPECTED.items():
        results = surefire_results(module)
        assert set(results) == set(classes), f"{module}: test classes run {sorted(results)}"
        for name, tests in classes.items():
            assert results[name] == {"tests": tests, "failures": 0, "errors": 0, "skipped": 0}, \
                f"{name}: {results[name]}"


# --- the Java client across owner moves (three nodes) ------------------------------------------

class ChurnProcess:
    """clients/java's `tools.Churn` (acquire + release one key in a loop, through every node) run
    by Maven in the background; its output lines collected as they come."""

    def __init__(self, urls: list[str], stop: Path, most_seconds: int = 600):
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            ["mvn", "-B", "-q", "-f", str(CLIENTS / "pom.xml"), "-pl", "java", "test-compile", "exec:java",
             "-Dexec.mainClass=org.eslm.client.tools.Churn",
             f"-Dexec.args={stop} {most_seconds} {' '.join(urls)}"],
            env=esnode.maven_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def ops(self) -> int:
        counts = [int(m.group(1)) for line in self.lines if (m := re.match(r"ops=(\d+)$", line))]
        return counts[-1] if counts else 0

    def await_ops_beyond(self, count: int, timeout: float = 120):
        deadline = time.monotonic() + timeout
        while self.ops() <= count:
            assert self.process.poll() is None, "churn ended early:\n" + "\n".join(self.lines[-30:])
            assert time.monotonic() < deadline, f"no progress past {count} ops:\n" + "\n".join(self.lines[-30:])
            time.sleep(0.1)


THREE_NODES = ThreeNodes("eslm-it-java-moves", {
    "cluster.routing.rebalance.enable": "none", **COPIES_MAY_SIT_ON_THE_MASTER})


@pytest.mark.slow
def test_the_java_client_sees_no_error_across_owner_moves(cluster, tmp_path):
    """Three nodes, one partition moved between them three times while the Java client acquires
    and releases through all of them: every 503 of a move is retried within the client's budget,
    so its loop never sees an error, and it keeps making progress after each move."""
    churn = None
    try:
        settled(cluster.nodes[0])
        churn = ChurnProcess([n.url for n in cluster.nodes], tmp_path / "stop")
        churn.await_ops_beyond(0, timeout=300)  # Maven compiles and starts it first
        for move in range(3):
            shards = http(cluster.nodes[0], "GET", "/_cat/shards/.locks?format=json&h=shard,node").json()
            with_copy = {s["node"] for s in shards if s["shard"] == "0"}
            target = next(n for n in live(cluster) if n.name not in with_copy)
            before = churn.ops()
            move_partition(cluster, target)
            assert owner_of_partition(cluster)[0] is target, f"move {move}"
            churn.await_ops_beyond(before + 20)
        (tmp_path / "stop").touch()
        assert churn.process.wait(timeout=120) == 0, "\n".join(churn.lines[-30:])
        churn.reader.join(timeout=10)
        done = next(line for line in churn.lines if line.startswith("done "))
        print(done)  # how many 503s were retried, for the record
        assert int(re.search(r"ops=(\d+)", done).group(1)) > 60
    finally:
        if churn is not None and churn.process.poll() is None:
            churn.process.kill()
