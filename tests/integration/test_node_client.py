"""The Node.js client's own tests (clients/node, issue 49 items 1 and 6) against a real node of
this module's own: `npm ci` (when node_modules is missing) and `npm run build`, then Node's test
runner over clients/node/dist/test with the node's URL in ESLM_URLS, first the tests that share
the node, then test/disruptive/ on its own (a limit lowered for a moment, and a snapshot restore
of the lock manager's feature state, which puts the partition in recovery grace where acquires
answer 503). The JUnit reports must show every expected suite with its number of tests, none
failed or skipped, so a test that silently stopped running fails here. The node has `path.repo`
for the restore and a short recovery grace (15 s, so the leases are at most that) for the test
that waits it out. Also: the tests fail, not skip, without ESLM_URLS; the contract driver
(tests/contract/PROTOCOL.md) answers a few commands."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import node as esnode
from cluster_kit import OneNode

ROOT = Path(__file__).resolve().parents[2]
NODE_CLIENT = ROOT / "clients" / "node"
CLUSTER = "eslm-it-node-client"
REPO = esnode.cluster_home(CLUSTER) / "node-0" / "repo"  # under the node's folder: its user may write it

ONE_NODE = OneNode(CLUSTER, {
    "path.repo": str(REPO),
    "locks.lease.max": "15s", "locks.lease.default": "15s", "locks.recovery.grace": "15s",
})

# describe() suites of clients/node/test and their number of tests, per run.
EXPECTED = {
    "main": {
        "lock": 12,
        "watchdog and loss": 8,
        "semaphores": 2,
        "elections": 3,
        "sessions": 3,
        "groups": 1,
        "fencing": 3,
        "close": 1,
        "fenced changes": 4,
        "downgrade": 2,
        "README": 6,
        "error classes": 1,
    },
    "disruptive": {
        "the whole node": 2,
    },
}

# The commands README.md's bash block gives for installing and building, which this module runs.
INSTALL = "npm ci && npm run build"


def npm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(["npm", *args], cwd=NODE_CLIENT, capture_output=True, text=True, timeout=timeout)


def build() -> None:
    """`npm ci` when node_modules is missing, then `npm run build` (tsc)."""
    if not (NODE_CLIENT / "node_modules").is_dir():
        done = npm("ci", "--no-audit", "--no-fund")
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    shutil.rmtree(NODE_CLIENT / "dist", ignore_errors=True)  # no stale compiled test survives
    done = npm("run", "build")
    assert done.returncode == 0, f"npm run build failed:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"


def compiled_tests(folder: str) -> list[str]:
    files = sorted(str(p.relative_to(NODE_CLIENT)) for p in (NODE_CLIENT / folder).glob("*.test.js"))
    assert files, f"no compiled tests in {folder}"
    return files


def run_tests(url: str, files: list[str], report: Path, concurrency: int, timeout: float) -> subprocess.CompletedProcess:
    """Node's test runner over `files` with ESLM_URLS, its spec report on stdout and a JUnit one in `report`."""
    return subprocess.run(
        ["node", "--test", f"--test-concurrency={concurrency}",
         "--test-reporter=spec", "--test-reporter-destination=stdout",
         "--test-reporter=junit", f"--test-reporter-destination={report}", *files],
        cwd=NODE_CLIENT, env={**os.environ, "ESLM_URLS": url}, capture_output=True, text=True, timeout=timeout,
    )


def suites(report: Path) -> dict[str, dict[str, int]]:
    """Per suite of a JUnit report: tests, failures, errors, skipped."""
    results = {}
    for suite in ET.parse(report).getroot().iter("testsuite"):
        results[suite.get("name")] = {k: int(suite.get(k)) for k in ("tests", "failures", "errors", "skipped")}
    return results


def check(done: subprocess.CompletedProcess, report: Path, expected: dict[str, int]) -> None:
    output = f"{done.stdout[-8000:]}\n{done.stderr[-4000:]}"
    assert done.returncode == 0, f"node --test failed:\n{output}"
    results = suites(report)
    assert set(results) == set(expected), f"suites run {sorted(results)}\n{output}"
    for name, tests in expected.items():
        assert results[name] == {"tests": tests, "failures": 0, "errors": 0, "skipped": 0}, f"{name}: {results[name]}"
    summary = re.findall(r"^ℹ (tests|pass|fail|skipped|duration_ms) (\S+)", done.stdout, re.M)
    print(" ".join(f"{k} {v}" for k, v in summary))


@pytest.fixture(scope="module")
def built():
    """The package installed and built, as README.md's install block says."""
    readme = (NODE_CLIENT / "README.md").read_text()
    assert re.findall(r"```bash\n(.*?)\n```", readme, re.S) == [INSTALL], "README.md's install block is what this module runs"
    build()


def test_the_node_clients_tests_pass_against_a_real_node(built, own_node, tmp_path):
    done = run_tests(own_node.url, compiled_tests("dist/test"), tmp_path / "main.xml", concurrency=2, timeout=240)
    check(done, tmp_path / "main.xml", EXPECTED["main"])
    done = run_tests(own_node.url, compiled_tests("dist/test/disruptive"), tmp_path / "disruptive.xml", concurrency=1, timeout=180)
    check(done, tmp_path / "disruptive.xml", EXPECTED["disruptive"])


def test_the_tests_fail_without_node_urls(built):
    """Without ESLM_URLS a test file fails at once: it never passes, nor skips, without a node."""
    env = {k: v for k, v in os.environ.items() if k != "ESLM_URLS"}
    done = subprocess.run(["node", "--test", "dist/test/locks.test.js"], cwd=NODE_CLIENT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "ESLM_URLS is not set" in done.stdout + done.stderr, done.stdout[-3000:]


def test_the_contract_driver_answers_the_protocol(built, own_node):
    """A few commands of tests/contract/PROTOCOL.md through the driver: a lock, a try-lock refused,
    a timeout, the same acquisition again, an async waiter granted after the release, errors."""
    commands = [
        {"id": 1, "cmd": "open", "client": "a"},
        {"id": 2, "cmd": "open", "client": "b", "urls": [own_node.url], "retry_for_ms": 2000},
        {"id": 3, "cmd": "lock", "client": "a", "handle": "h1", "key": "node-driver-1", "lease_ms": 10000},
        {"id": 4, "cmd": "lock", "client": "b", "handle": "h2", "key": "node-driver-1", "try": True},
        {"id": 5, "cmd": "lock", "client": "b", "handle": "h3", "key": "node-driver-1", "timeout_ms": 200},
        {"id": 6, "cmd": "lock_again", "handle": "h1"},
        {"id": 7, "cmd": "lock", "client": "b", "handle": "h4", "key": "node-driver-1", "async": True},
        {"id": 8, "cmd": "unlock", "handle": "h1"},
        # Queues behind h4, granted by the release: its timeout gives 7's answer time to arrive.
        {"id": 9, "cmd": "lock", "client": "a", "handle": "h5", "key": "node-driver-1", "timeout_ms": 1500},
        {"id": 10, "cmd": "lost", "handle": "h1"},
        {"id": 11, "cmd": "renew", "handle": "h1"},
        {"id": 12, "cmd": "frobnicate"},
        {"id": 13, "cmd": "close", "client": "a"},
        {"id": 14, "cmd": "lock", "client": "a", "handle": "h6", "key": "node-driver-2"},
        {"id": 15, "cmd": "exit"},
    ]
    stdin = "".join(json.dumps(c) + "\n" for c in commands)
    done = subprocess.run(["node", "dist/contract/driver.js"], cwd=NODE_CLIENT, input=stdin,
                          env={**os.environ, "ESLM_URLS": own_node.url}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == list(range(1, 16)), done.stdout
    kind = {i: a["error"]["kind"] for i, a in answers.items() if not a["ok"]}
    assert kind == {4: "conflict", 5: "wait_timeout", 9: "wait_timeout", 11: "not_held", 12: "invalid_argument",
                    14: "closed"}, done.stdout
    assert answers[6]["token"] == answers[3]["token"], "the same acquisition, the same grant"
    # Had the driver waited for 7 before reading 8, the release that grants it would never come.
    assert answers[7]["token"] > answers[3]["token"], "the waiter, granted after the release"
    assert answers[10]["lost"] is False
    order = [a["id"] for a in map(json.loads, done.stdout.splitlines())]
    assert order.index(7) < order.index(9), "the async command answered when it completed"
