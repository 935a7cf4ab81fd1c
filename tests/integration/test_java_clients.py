"""The Java client's and the ShedLock provider's own JUnit tests (clients/, issue 14) against the
shared real node: `mvn verify` with the node's URL, then the surefire reports must show every
expected test class with its number of tests run, none failed, errored or skipped. The JUnit tests
fail by themselves when no node URL is given, so a green run here means they talked to this node."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import node as esnode

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"

# Test classes and their number of tests, per module: a class or test that silently stopped
# running fails here.
EXPECTED = {
    "java": {
        "org.eslm.client.LockClientTest": 7,
        "org.eslm.client.WatchdogTest": 4,
        "org.eslm.client.AsyncTest": 2,
        "org.eslm.client.TokenLockTest": 3,
        "org.eslm.client.SessionTest": 2,
        "org.eslm.client.MultiLockTest": 2,
        "org.eslm.client.ServerErrorsTest": 1,
        "org.eslm.client.example.ReadmeExampleTest": 2,
    },
    "shedlock": {
        "org.eslm.shedlock.ShedLockContractTest": 5,
        # ShedLock's own suite for extensible providers (shedlock-test-support).
        "org.eslm.shedlock.ShedLockSupportIntegrationTest": 15,
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


def test_java_client_and_shedlock_provider_tests_pass_against_a_real_node(single_node):
    done = run_maven(single_node.url)
    assert done.returncode == 0, f"mvn verify failed:\n{done.stdout[-6000:]}\n{done.stderr[-6000:]}"
    for module, classes in EXPECTED.items():
        results = surefire_results(module)
        assert set(results) == set(classes), f"{module}: test classes run {sorted(results)}"
        for name, tests in classes.items():
            assert results[name] == {"tests": tests, "failures": 0, "errors": 0, "skipped": 0}, \
                f"{name}: {results[name]}"
