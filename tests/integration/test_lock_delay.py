"""Lock-delay on a real node over HTTP (docs/API.md "Lock-delay", docs/LOCK_CORE.md
"Lock-delay"): a holder whose lease runs out (as one frozen by a GC pause would) keeps its key
from other owners for the delay, its owner takes it back at once, a waiter is granted only when
the delay ends; a release leaves no delay, a force-release does; the setting gives every lock a
delay; bad values are 400 naming the field. The failover case is in test_replication.py."""

from __future__ import annotations

import time

import pytest

from lockclient import assert_error, ok, unique, wait_until


def delays(locks, key):
    return ok(locks.get(key)).get("lock_delays", [])


def expired(locks, key, owner, delay="3s"):
    """`owner` takes `key` with a 500 ms lease and `delay`, and lets the lease run out."""
    grant = ok(locks.acquire(key, owner, lease="500ms", lock_delay=delay))
    wait_until(lambda: delays(locks, key), 10, message=f"{owner}'s lease on {key} ran out")
    return grant


def test_an_expired_holder_keeps_its_key_from_others_for_the_delay(locks):
    key, paused, other = unique(), unique("paused"), unique("other")
    grant = expired(locks, key, paused)
    # Read before the listing is asked for: the delay ends no earlier than this plus what it
    # says is left, however long the requests below take.
    asked_at = time.monotonic()
    [delay] = delays(locks, key)
    assert delay["owner"] == paused and delay["mode"] == "exclusive" and 0 < delay["delay_left_ms"] <= 3000, delay
    err = assert_error(locks.acquire(key, other), 409, "lock_conflict_exception")
    assert "lock-delay" in err["reason"] and 0 < int(err["retry_after_ms"]) <= 3000, err
    ended_at = asked_at + delay["delay_left_ms"] / 1000
    waited = ok(locks.acquire(key, other, wait="10s", timeout=20))
    assert time.monotonic() >= ended_at - 0.1, "granted before the delay ended"
    assert waited["fencing_token"] > grant["fencing_token"] and waited["waited_ms"] > 0
    assert delays(locks, key) == []
    ok(locks.release(key, other))


def test_its_owner_takes_the_key_back_during_the_delay(locks):
    key, paused = unique(), unique("paused")
    grant = expired(locks, key, paused)
    back = ok(locks.acquire(key, paused, lease="30s"))
    assert back["fencing_token"] > grant["fencing_token"] and back["reentrant"] is False
    ok(locks.release(key, paused))


def test_a_release_leaves_no_delay_and_a_force_release_does(locks):
    key, a, b = unique(), unique("a"), unique("b")
    ok(locks.acquire(key, a, lock_delay="30s"))
    ok(locks.release(key, a))
    ok(locks.acquire(key, b))
    ok(locks.force_release(key, reason="b is gone"))
    assert delays(locks, key) == [], "b's lock had no delay"
    ok(locks.acquire(key, a, lock_delay="30s"))
    ok(locks.force_release(key, reason="a is gone"))
    assert [d["owner"] for d in delays(locks, key)] == [a]
    assert_error(locks.acquire(key, b), 409, "lock_conflict_exception")
    listed = ok(locks.call("GET", "/_locks", params={"prefix": key}))
    assert listed["locks"] == [], "a delay is no lock"


def test_a_lock_shows_its_delay_when_listed(locks):
    key, a = unique(), unique("a")
    ok(locks.acquire(key, a, lock_delay="2s"))
    [listed] = ok(locks.call("GET", "/_locks", params={"prefix": key}))["locks"]
    assert listed["lock_delay_ms"] == 2000, listed
    ok(locks.release(key, a))


def test_the_setting_gives_every_lock_a_delay(locks):
    key, paused = unique(), unique("paused")
    ok(locks.call("PUT", "/_cluster/settings", {"persistent": {"locks.lock_delay.default": "2s"}}))
    try:
        ok(locks.acquire(key, paused, lease="500ms"))
        wait_until(lambda: delays(locks, key), 10, message="the lease ran out")
        assert_error(locks.acquire(key, unique("other")), 409, "lock_conflict_exception")
        ok(locks.acquire(unique(), paused, lock_delay="0s"))
    finally:
        ok(locks.call("PUT", "/_cluster/settings", {"persistent": {"locks.lock_delay.default": None}}))
    bad = locks.call("PUT", "/_cluster/settings", {"persistent": {"locks.lock_delay.default": "2m"}})
    assert bad.status_code == 400 and "locks.lock_delay.default" in bad.text, bad.text


@pytest.mark.parametrize("path, body, field", [
    ("/_locks/{k}/_acquire", {"owner": "o", "acquisition": "o", "lock_delay": "2m"}, "lock_delay"),
    ("/_locks/{k}/_acquire", {"owner": "o", "acquisition": "o", "lock_delay": "soon"}, "lock_delay"),
    ("/_locks/{k}/_acquire", {"owner": "o", "acquisition": "o", "lock_delay": -5}, "lock_delay"),
    ("/_semaphores/{k}/_acquire", {"owner": "o", "acquisition": "o", "limit": 2, "lock_delay": "1s"}, "lock_delay"),
    ("/_locks/{k}/_renew", {"owner": "o", "acquisition": "o", "lock_delay": "1s"}, "lock_delay"),
])
def test_bad_lock_delays_are_400_naming_the_field(locks, path, body, field):
    r = locks.call("POST", path.format(k=unique()), body)
    assert r.status_code == 400, r.text
    assert field in r.text, r.text


def test_a_deposed_leader_keeps_its_election_for_the_delay(locks):
    """The case a lock-delay is for: a leader frozen past its term must not see a successor
    writing while its own last writes may still land."""
    name, leader, successor = unique("election"), unique("leader"), unique("successor")
    path = f"/_elections/{name}"
    ok(locks.call("POST", f"{path}/_campaign", {"candidate": leader, "acquisition": leader, "lease": "30s", "lock_delay": "20s"}))
    ok(locks.call("POST", f"/_locks/{name}/_force_release", {"scope": "election", "reason": "leader unresponsive"}))
    refused = locks.call("POST", f"{path}/_campaign", {"candidate": successor, "acquisition": successor, "wait": "0s"})
    assert_error(refused, 409, "lock_conflict_exception")
    again = ok(locks.call("POST", f"{path}/_campaign", {"candidate": leader, "acquisition": leader, "wait": "0s"}))
    assert again["leader"] == leader, again
    ok(locks.call("POST", f"{path}/_resign", {"candidate": leader, "acquisition": leader}))


def test_a_multi_lock_keeps_each_of_its_keys_for_its_delay(locks):
    first, second, a, b = unique(), unique(), unique("a"), unique("b")
    body = {"owner": a, "locks": [{"key": first}, {"key": second}], "lock_delay": "20s"}
    ok(locks.call("POST", "/_locks/_acquire", body))
    for key in (first, second):
        ok(locks.force_release(key, reason="a is gone"))
        assert [d["owner"] for d in delays(locks, key)] == [a]
        assert_error(locks.acquire(key, b), 409, "lock_conflict_exception")
