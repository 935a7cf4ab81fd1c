"""The Go client's own tests (clients/go, issue 49 item 2) against a real node of this module's
own: `go vet` and `gofmt` first, then `go test -json ./...` with ESLM_URLS naming the node, whose
events must show every expected test (and example) of each package passed, none failed or
skipped (a test that silently stopped running fails here too). Last, the node is restarted so its
lock partition sits in recovery grace (`locks.durability: memory`: docs/API.md "Errors", 503),
and the test built with `-tags eslm_grace` shows the client retrying those 503s within each
call's budget, never beyond. The Go tests fail by themselves without ESLM_URLS, so a green run
here means they talked to this node."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from cluster_kit import OneNode

ROOT = Path(__file__).resolve().parents[2]
GO_CLIENT = ROOT / "clients" / "go"
MODULE = "github.com/eslm/elasticsearch-lock-manager/clients/go"

# Tests and examples per package: one that silently stopped running fails here.
EXPECTED = {
    MODULE: {
        # mutex_test.go
        "TestLockWaitsUntilGrantedThenAGreaterToken",
        "TestTryLockOfABusyKeyIsErrLocked",
        "TestLockGivesUpAtTheContextsDeadline",
        "TestCancelledLockLeavesNoWaiterNorGrant",
        "TestBadOptionsAreRefusedBeforeAnythingIsSent",
        "TestForceReleaseIsSignalledOnDoneWithinTheLease",
        "TestWithoutLossWatchARenewalFindsTheLossWithinTheLease",
        "TestWithoutKeepAliveTheLeaseRunsOutAndIsSignalled",
        "TestTheWatchdogKeepsTheLockPastItsLease",
        "TestALateReleaseNeverEndsANewerGrant",
        "TestReacquireAnswersTheSameGrant",
        "TestMutexAndLockerExcludeGoroutinesOfOneProcess",
        "TestTreeLocks",
        "TestDeadlockVictimIsErrDeadlock",
        # session_test.go
        "TestSessionKeepsItsLocksAliveAndCloseReleasesThem",
        "TestALostSessionLosesItsLocks",
        "TestAnUnknownSessionIsErrSessionNotFound",
        "TestCloseReleasesEverythingTheClientHolds",
        "TestRWMutexReadersShareWritersExclude",
        # semaphore_test.go, election_test.go, documents_test.go
        "TestSemaphoreHoldsAtMostItsLimit",
        "TestElectionCampaignObserveResign",
        "TestFencedWritesRefuseAStaleHolder",
        "TestOptimisticUpdatesLoseNoIncrement",
        # fenced_test.go
        "TestFencedChangesMergeOperateReadAndDelete",
        "TestAStaleHoldersReadModifyWriteIsRefusedAndTheIncrementKept",
        "TestFencedBulkAnswersEachItem",
        "TestFencedChangesRefusedBeforeSendingAndUnderALostLock",
        "TestRWMutexDowngradeLetsAQueuedReaderInWhileAWriterWaits",
        "TestDowngradeOfNothingOrOfALostLock",
        # example_test.go: the README's code
        "Example",
        "ExampleMutex_TryLock",
        "ExampleNewSession",
        "ExampleElection",
        "ExampleClient_OptimisticUpdate",
        "ExampleMutex_Update",
        "ExampleRWMutex_Downgrade",
    },
    f"{MODULE}/cmd/eslm-contract-driver": {"TestDriverSpeaksTheProtocol"},
}
GRACE_TEST = "TestUnavailableIsRetriedWithinTheCallersBudgetNeverBeyond"

# Leases of at most 10 s, so that the recovery grace (which must cover the longest lease) is
# short enough to wait out here; 30 s, so that the restart leaves more than 13 s of it: a grant's
# 503 is then answered at once (the node that routes a request waits out the grace's last 10 s
# itself) and the client's retries within a 3 s budget show.
ONE_NODE = OneNode("eslm-it-go-client", {
    "locks.durability": "memory", "locks.lease.max": "10s", "locks.lease.default": "10s",
    "locks.recovery.grace": "30s"})


def go(*args: str, url: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`go <args>` in clients/go with the machine's toolchain (never a downloaded one)."""
    env = {**os.environ, "GOTOOLCHAIN": "local"}
    env.pop("ESLM_URLS", None)
    if url is not None:
        env["ESLM_URLS"] = url
    return subprocess.run(["go", *args], cwd=GO_CLIENT, env=env, capture_output=True, text=True, timeout=timeout)


def outcomes(done: subprocess.CompletedProcess) -> dict[str, dict[str, str]]:
    """Per package, each test's final action (pass, fail, skip) from `go test -json`; the
    package's own under the name ""."""
    found: dict[str, dict[str, str]] = {}
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("Action") in ("pass", "fail", "skip") and "Package" in event:
            found.setdefault(event["Package"], {})[event.get("Test") or ""] = event["Action"]
    return found


def failed_output(done: subprocess.CompletedProcess) -> str:
    lines = []
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            lines.append(line)
            continue
        if event.get("Action") == "output" and "level=INFO" not in event.get("Output", ""):
            lines.append(event["Output"].rstrip("\n"))
    return "\n".join(lines[-80:]) + "\n" + done.stderr[-3000:]


def test_go_vet_and_gofmt_are_clean():
    for tags in ((), ("-tags", "eslm_grace")):
        vet = go("vet", *tags, "./...")
        assert vet.returncode == 0, f"go vet {' '.join(tags)}:\n{vet.stdout}{vet.stderr}"
    unformatted = subprocess.run(["gofmt", "-l", "."], cwd=GO_CLIENT, capture_output=True, text=True, timeout=60)
    assert unformatted.returncode == 0 and unformatted.stdout == "", f"gofmt -l: {unformatted.stdout}{unformatted.stderr}"


def test_go_client_tests_pass_against_a_real_node(own_node):
    done = go("test", "-json", "-count=1", "-timeout", "150s", "./...", url=own_node.url)
    found = outcomes(done)
    assert done.returncode == 0, f"go test failed:\n{failed_output(done)}"
    for package, tests in EXPECTED.items():
        ran = found.get(package, {})
        assert ran.get("") == "pass", f"{package}: {ran.get('')}\n{failed_output(done)}"
        assert set(ran) - {""} == tests, f"{package}: tests run {sorted(set(ran) - {''})}"
        assert {t: ran[t] for t in tests} == {t: "pass" for t in tests}, ran


def test_the_go_client_retries_503s_of_a_recovery_grace_within_each_budget(own_node):
    """Runs last: the node restarts (memory durability: its partition reopens empty, in grace)
    and the grace test, which starts by checking that grace is on, waits it out at its end."""
    t0 = time.monotonic()
    built = go("test", "-tags", "eslm_grace", "-c", "-o", os.devnull, ".")  # compiled before the grace starts
    assert built.returncode == 0, built.stderr
    t1 = time.monotonic()
    own_node.kill()  # no state survives either way (memory durability); a kill is quicker
    own_node.start()
    own_node.wait_until_ready()
    t2 = time.monotonic()
    done = go("test", "-json", "-count=1", "-timeout", "90s", "-tags", "eslm_grace", "-run", f"^{GRACE_TEST}$", ".",
              url=own_node.url)
    found = outcomes(done).get(MODULE, {})
    print(f"compiled in {t1 - t0:.1f}s, restarted in {t2 - t1:.1f}s, the grace test ran {time.monotonic() - t2:.1f}s")
    print("".join(json.loads(line).get("Output", "") for line in done.stdout.splitlines()
                  if line.startswith("{") and "grace_test.go" in line))
    assert done.returncode == 0, f"go test -tags eslm_grace failed:\n{failed_output(done)}"
    assert found == {"": "pass", GRACE_TEST: "pass"}, found
