"""Issue 50 item 1: the lock metrics reach Elasticsearch's own telemetry. A node started with its
metrics on (`telemetry.metrics.enabled`) sends them through its APM agent to a loopback stand-in
for the APM Server (apm_intake.py) every second; the test takes locks — grants, a conflict, a wait
that runs out, a lease that expires, a force-release, a queued waiter granted on a release — and
finds each `es.locks.*` metric of docs/OPERATIONS.md "Metrics" arriving with what it did: the
counters count it (the agent sends a counter's increase since its last report, so the reports
add up), the histograms hold its samples, the gauges show what the node holds, and all of it
agrees with `GET /_locks/_stats`. On one node no copy fails and no partition fails over: those two
counters send nothing (their counting is LockMetricsTest's).

One node of this module's own. Waits are bounded polls (`wait_until`), never fixed sleeps.
"""

from __future__ import annotations

import threading
import time

import pytest

import node as esnode
from apm_intake import Intake
from cluster_kit import OneNode
from lockclient import LockClient, assert_error, ok, unique, wait_for_waiter, wait_until

pytestmark = pytest.mark.every_version

PORT = esnode.free_port()  # the intake's, reserved for this process

ONE_NODE = OneNode("eslm-it-metrics", {
    "telemetry.metrics.enabled": "true",
    "telemetry.agent.server_url": f"http://127.0.0.1:{PORT}",
    "telemetry.agent.metrics_interval": "1s",
    "telemetry.agent.api_request_time": "1s",  # a request closes every second: the reports come in then
})

COUNTERS = ["grants", "conflicts", "wait_timeouts", "expiries", "force_releases", "preemptions", "deadlocks",
            "failovers", "replication.copy_failures"]
HISTOGRAMS = ["wait_time", "hold_time", "handoff_time", "replication.round_trip_time"]
GAUGES = ["held.current", "waiters.current", "sessions.current", "native_memory.usage",
          "partitions.served.current", "partitions.unconfirmed.current"]
ALL = ([f"es.locks.{c}.total" for c in COUNTERS] + [f"es.locks.{h}.histogram" for h in HISTOGRAMS]
       + [f"es.locks.{g}" for g in GAUGES])


@pytest.fixture(scope="module")
def intake():
    receiver = Intake(PORT).start()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="module")
def metrics_node(intake, own_node):
    """The module's node, started once the intake listens (the agent backs off from a dead one)."""
    return own_node


def total(intake: Intake, name: str) -> int:
    """A counter's value since the node started: the sum of the increases the agent reported."""
    return sum(int(s["value"]) for s in intake.samples(name))


def histogram(intake: Intake, name: str) -> list[float]:
    """Every sample of a histogram, as the agent's buckets give them back (each value `count` times)."""
    values = []
    for s in intake.samples(name):
        for v, c in zip(s["values"], s["counts"]):
            values += [float(v)] * int(c)
    return values


def latest(intake: Intake, name: str, since: float):
    """A gauge's last value reported after `since`, or None."""
    samples = intake.samples(name, since)
    return samples[-1]["value"] if samples else None


def local_stats(lc: LockClient) -> dict:
    return next(iter(ok(lc.call("GET", "/_locks/_stats/_local"))["nodes"].values()))["locks"]


class Waiter(threading.Thread):
    """An acquire that waits, in a thread of its own: its answer's status and how long it took."""

    def __init__(self, lc: LockClient, key: str, owner: str, wait: str):
        super().__init__(daemon=True)
        self.lc, self.key, self.owner, self.wait = LockClient(lc.base_url), key, owner, wait
        self.status = None
        self.took_ms = None

    def run(self):
        started = time.monotonic()
        try:
            self.status = self.lc.acquire(self.key, self.owner, wait=self.wait).status_code
        finally:
            self.took_ms = (time.monotonic() - started) * 1000
            self.lc.close()


def test_every_lock_metric_arrives_with_what_the_node_did(intake, metrics_node, lc):
    wait_until(lambda: intake.names("es.locks."), 60, interval=0.2,
               message="the first lock metrics at the loopback intake")
    assert intake.errors == [], intake.errors
    p = unique("metrics")

    # Grants and a conflict.
    ok(lc.acquire(f"{p}-1", "a"))
    assert_error(lc.acquire(f"{p}-1", "b"), 409, "lock_conflict_exception")
    # A wait that runs out.
    ok(lc.acquire(f"{p}-2", "a"))
    assert_error(lc.acquire(f"{p}-2", "c", wait="200ms"), 409, "lock_wait_timeout_exception")
    # A lease that runs out.
    ok(lc.acquire(f"{p}-3", "d", lease="1s"))
    wait_until(lambda: lc.holders(f"{p}-3") == [], 15, message="the 1 s lease ran out")
    # A force-release.
    ok(lc.acquire(f"{p}-4", "e"))
    ok(lc.force_release(f"{p}-4", reason="metrics test"))
    # A queued waiter granted when the holder releases: a hand-off.
    ok(lc.acquire(f"{p}-5", "f"))
    g = Waiter(lc, f"{p}-5", "g", "30s")
    g.start()
    wait_for_waiter(lc, f"{p}-5", "g")
    ok(lc.release(f"{p}-5", "f"))
    g.join(30)
    assert g.status == 200, g.status

    # What the node holds now: a's two locks and g's, a waiter, a session.
    h = Waiter(lc, f"{p}-1", "h", "60s")
    h.start()
    wait_for_waiter(lc, f"{p}-1", "h")
    session = ok(lc.session_create("s"))["session"]
    quiet = time.monotonic()
    try:
        check_counters(intake, lc)
        check_histograms(intake, g)
        check_gauges(intake, lc, quiet)
        unexpected = intake.names("es.locks.") - set(ALL)
        assert unexpected == set(), f"not in docs/OPERATIONS.md 'Metrics': {unexpected}"
        assert intake.errors == [], intake.errors
    finally:
        ok(lc.session_delete(session, "s"))
        ok(lc.release(f"{p}-1", "a"))
        h.join(30)
        assert h.status == 200, h.status
        for key, owner in ((f"{p}-1", "h"), (f"{p}-2", "a"), (f"{p}-5", "g")):
            ok(lc.release(key, owner))


def check_counters(intake: Intake, lc: LockClient) -> None:
    expected = {"grants": 6, "conflicts": 1, "wait_timeouts": 1, "expiries": 1, "force_releases": 1}
    for counter, value in expected.items():
        name = f"es.locks.{counter}.total"
        wait_until(lambda: total(intake, name) >= value, 30, interval=0.2,
                   message=f"{name} reaching {value} (at {total(intake, name)})")
        assert total(intake, name) == value, (name, intake.samples(name))
    stats = local_stats(lc)
    for counter, field in {"grants": "grants", "conflicts": "conflicts", "wait_timeouts": "timeouts",
                           "expiries": "expiries", "force_releases": "force_releases"}.items():
        assert total(intake, f"es.locks.{counter}.total") == stats[field], (counter, stats)
    # Nothing of these happened on one node: the agent sends no report of a counter that stayed 0.
    for counter in ("preemptions", "deadlocks", "failovers", "replication.copy_failures"):
        assert total(intake, f"es.locks.{counter}.total") == 0, intake.samples(f"es.locks.{counter}.total")


def check_histograms(intake: Intake, g: Waiter) -> None:
    """The agent gives a histogram back in buckets of its own (a factor of sqrt(2) apart): values
    are checked within a factor of 2."""
    wait_until(lambda: len(histogram(intake, "es.locks.hold_time.histogram")) >= 3, 30, interval=0.2,
               message="the hold times of the expired, the force-released and the released lock")
    holds = histogram(intake, "es.locks.hold_time.histogram")
    assert len(holds) == 3, holds
    assert max(holds) >= 500, f"the expired lock was held ~1 s: {holds}"
    wait_until(lambda: histogram(intake, "es.locks.wait_time.histogram"), 30, interval=0.2,
               message="the granted waiter's wait")
    waits = histogram(intake, "es.locks.wait_time.histogram")
    assert len(waits) == 1 and 0 <= waits[0] <= 2 * g.took_ms + 1, (waits, g.took_ms)
    wait_until(lambda: histogram(intake, "es.locks.handoff_time.histogram"), 30, interval=0.2,
               message="the hand-off to the waiter")
    handoffs = histogram(intake, "es.locks.handoff_time.histogram")
    assert len(handoffs) == 1 and 0 < handoffs[0] <= 2 * g.took_ms, (handoffs, g.took_ms)
    trips = histogram(intake, "es.locks.replication.round_trip_time.histogram")
    assert trips and all(0 < t < 10_000 for t in trips), trips


def check_gauges(intake: Intake, lc: LockClient, quiet: float) -> None:
    stats = local_stats(lc)
    expected = {"held.current": 3, "waiters.current": 1, "sessions.current": 1,
                "partitions.served.current": 1, "partitions.unconfirmed.current": 0,
                "native_memory.usage": stats["memory_bytes"]}
    assert (stats["held"], stats["waiting"], stats["sessions"]) == (3, 1, 1), stats
    assert stats["memory_bytes"] > 0, stats
    for gauge, value in expected.items():
        name = f"es.locks.{gauge}"
        wait_until(lambda: latest(intake, name, quiet) == value, 30, interval=0.2,
                   message=f"{name} reporting {value} (last: {latest(intake, name, quiet)})")
