"""Leader elections (docs/API.md "Elections", docs/LOCK_CORE.md "Elections") on a real node
over HTTP: one leader at a time while five candidates campaign and resign in turn (every
leadership interval recorded, none overlapping), terms strictly increasing, observe waking on
resign, on lease expiry and for the first leader, the state (leader, value, candidates), and bad
input answered 400 naming the field."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from lockclient import LockClient, assert_error, enc, ok, unique, wait_until


def call(lc: LockClient, name: str, action: str, timeout=None, **body):
    """One election call; a candidate's calls name the acquisition `candidate` unless told
    otherwise (as `LockClient` does for owners)."""
    return lc.call("POST", f"/_elections/{enc(name)}/_{action}",
                   LockClient._named(body.get("candidate"), body), timeout=timeout)


def state(lc: LockClient, name: str) -> dict:
    return ok(lc.call("GET", f"/_elections/{enc(name)}"))


def observe(lc: LockClient, name: str, term: int, wait: str = "10s"):
    return lc.call("GET", f"/_elections/{enc(name)}/_observe", params={"term": term, "wait": wait})


def watching(lc: LockClient) -> None:
    """Waits until the node counts a registered watch: the observe is waiting in the core."""
    wait_until(lambda: ok(lc.stats())["total"]["watches"] >= 1, 10, message="observe registered")


def test_one_leader_at_a_time_and_terms_increase(locks):
    name = unique("election")
    candidates = [f"c{i}" for i in range(5)]
    intervals: list[tuple[float, float, str, int]] = []
    guard = threading.Lock()
    leaders: list[str] = []

    def serve(candidate: str) -> None:
        won = ok(call(locks, name, "campaign", candidate=candidate, value=f"addr-{candidate}",
                      wait="30s", lease="30s", timeout=40))
        start = time.monotonic()
        with guard:
            leaders.append(candidate)
            assert len(leaders) == 1, f"two leaders at once: {leaders}"
        assert (won["leader"], won["value"]) == (candidate, f"addr-{candidate}")
        seen = state(locks, name)
        assert (seen["leader"], seen["term"]) == (candidate, won["term"])
        time.sleep(0.05)  # hold leadership a moment so overlaps would show
        with guard:
            leaders.remove(candidate)
            end = time.monotonic()
        intervals.append((start, end, candidate, won["term"]))
        ok(call(locks, name, "resign", candidate=candidate, term=won["term"]))

    with ThreadPoolExecutor(len(candidates)) as pool:
        for f in [pool.submit(serve, c) for c in candidates]:
            f.result(timeout=60)
    intervals.sort()
    assert sorted(c for _, _, c, _ in intervals) == candidates
    for (s1, e1, c1, t1), (s2, _, c2, t2) in zip(intervals, intervals[1:]):
        assert e1 <= s2, f"{c1} and {c2} overlapped"
        assert t2 > t1, f"terms do not increase: {c1}={t1}, {c2}={t2}"
    after = state(locks, name)
    assert (after["leader"], after["term"], after["candidates"]) == (None, 0, [])


def test_state_shows_leader_value_and_candidates(locks):
    name = unique("election")
    won = ok(call(locks, name, "campaign", candidate="a", value="10.0.0.1:9200", lease="30s"))
    waiting = ThreadPoolExecutor(1).submit(
        lambda: call(locks, name, "campaign", candidate="b", wait="20s", timeout=30))
    wait_until(lambda: state(locks, name)["candidates"] == ["b"], 10, message="b queued")
    seen = state(locks, name)
    assert (seen["name"], seen["leader"], seen["value"], seen["term"]) == (
        name, "a", "10.0.0.1:9200", won["term"])
    assert 0 < seen["lease_ms"] <= 30_000
    ok(call(locks, name, "renew", candidate="a", term=won["term"], lease="20s"))
    ok(call(locks, name, "resign", candidate="a", term=won["term"]))
    b = ok(waiting.result(timeout=30))
    assert (b["leader"], b["value"]) == ("b", None) and b["term"] > won["term"]
    # a campaign whose wait runs out answers as a lock acquire's wait timeout does
    assert_error(call(locks, name, "campaign", candidate="c", wait="200ms"), 409,
                 "lock_wait_timeout_exception")
    assert_error(call(locks, name, "resign", candidate="a"), 404, "lock_not_held_exception")


def test_observe_wakes_on_resign_and_on_expiry(locks):
    name = unique("election")
    won = ok(call(locks, name, "campaign", candidate="a", lease="30s"))
    # a term other than the current one answers at once, with the state
    now = ok(observe(locks, name, 0))
    assert (now["changed"], now["leader"], now["term"]) == (True, "a", won["term"])
    pending = ThreadPoolExecutor(1).submit(lambda: observe(locks, name, won["term"]))
    watching(locks)
    assert not pending.done()
    t0 = time.monotonic()
    ok(call(locks, name, "resign", candidate="a"))
    woke = ok(pending.result(timeout=5))
    assert time.monotonic() - t0 < 1.0
    assert (woke["changed"], woke["leader"], woke["term"]) == (True, None, 0)

    short = ok(call(locks, name, "campaign", candidate="b", lease="500ms"))
    t0 = time.monotonic()
    woke = ok(observe(locks, name, short["term"]))
    assert woke["changed"] and woke["leader"] is None
    assert time.monotonic() - t0 < 0.5 + 1.0, "woken within a second of the lease's end"


def test_observe_with_no_term_waits_for_the_first_leader(locks):
    name = unique("election")
    pending = ThreadPoolExecutor(1).submit(lambda: observe(locks, name, 0, "20s"))
    watching(locks)
    assert not pending.done(), "no leader yet: the observe waits"
    t0 = time.monotonic()
    won = ok(call(locks, name, "campaign", candidate="first", value="v1"))
    woke = ok(pending.result(timeout=5))
    assert time.monotonic() - t0 < 1.0
    assert (woke["changed"], woke["leader"], woke["value"], woke["term"]) == (
        True, "first", "v1", won["term"])
    # a wait that runs out answers the unchanged state
    quiet = ok(observe(locks, unique("election"), 0, "200ms"))
    assert (quiet["changed"], quiet["leader"], quiet["term"]) == (False, None, 0)


@pytest.mark.parametrize("body,field", [
    ({}, "candidate"),
    ({"candidate": "a", "value": "x" * 1025}, "value"),
    ({"candidate": "a", "value": 5}, "value"),
    ({"candidate": "a", "wait": "soon"}, "wait"),
    ({"candidate": "a", "lease": "-1s"}, "lease"),
    ({"candidate": "a", "owner": "a"}, "owner"),
])
def test_bad_campaigns_are_400_naming_the_field(locks, body, field):
    r = call(locks, unique("election"), "campaign", **body)
    assert r.status_code == 400 and field in r.text, r.text


def test_bad_resign_and_observe_are_400_naming_the_field(locks):
    name = unique("election")
    assert_error(call(locks, name, "resign", candidate="a", term=0), 400,
                 "illegal_argument_exception", "term")
    assert_error(call(locks, name, "resign"), 400, "illegal_argument_exception", "candidate")
    assert_error(locks.call("GET", f"/_elections/{enc(name)}/_observe", params={"term": "x", "wait": "1s"}),
                 400, "illegal_argument_exception", "term")
    assert_error(locks.call("GET", f"/_elections/{enc(name)}/_observe", params={"term": 0}),
                 400, "illegal_argument_exception", "wait")


def test_listing_shows_the_leadership_with_its_value(locks):
    name, candidate = unique("election"), unique("candidate")
    won = ok(call(locks, name, "campaign", candidate=candidate, value="v-1"))
    listed = ok(locks.list(owner=candidate))["locks"]
    assert [(l["key"], l["scope"], l["fencing_token"], l["value"]) for l in listed] == [
        (name, "election", won["term"], "v-1")]
    # a lock of the same name is another key: the election's name space is its own
    ok(locks.acquire(name, candidate))
    assert ok(locks.get(name))["holders"][0]["fencing_token"] != won["term"]
    ok(locks.release(name, candidate))
    ok(call(locks, name, "resign", candidate=candidate))


def test_a_force_release_ends_the_leadership_and_elects_the_next_candidate(locks):
    """docs/API.md "Administration": an admin evicts a dead leader without waiting for its
    lease; observers wake at once and the queued candidate leads with a larger term."""
    name = unique("election")
    first = ok(call(locks, name, "campaign", candidate="a", lease="5m"))
    pool = ThreadPoolExecutor(2)
    queued = pool.submit(lambda: call(locks, name, "campaign", candidate="b", wait="20s", timeout=30))
    wait_until(lambda: state(locks, name)["candidates"] == ["b"], 10, message="b queued")
    pending = pool.submit(lambda: observe(locks, name, first["term"], "20s"))
    watching(locks)
    t0 = time.monotonic()
    evicted = ok(locks.force_release(name, scope="election", reason="a's host is gone"))
    assert evicted["released"] == [{"owner": "a", "fencing_token": first["term"]}]
    woke = ok(pending.result(timeout=5))
    assert time.monotonic() - t0 < 1.0
    assert woke["changed"] and woke["term"] != first["term"]
    second = ok(queued.result(timeout=5))
    assert second["leader"] == "b" and second["term"] > first["term"]
    assert_error(call(locks, name, "renew", candidate="a"), 404, "lock_not_held_exception")
    ok(call(locks, name, "resign", candidate="b"))


def test_cat_elections_lists_leaders_and_stats_count_them(locks):
    name, other = unique("election"), unique("election")
    before = ok(locks.stats())["total"].get("election_leaders", 0)
    won = ok(call(locks, name, "campaign", candidate="a", value="10.0.0.7:5432"))
    ok(call(locks, other, "campaign", candidate="b"))
    ok(locks.acquire(name, "a"))  # a lock of the same name is not an election
    rows = ok(locks.call("GET", "/_cat/elections", params={"format": "json", "prefix": name}))
    assert [(r["name"], r["leader"], str(r["term"]), r["value"]) for r in rows] == [
        (name, "a", str(won["term"]), "10.0.0.7:5432")], rows
    text = locks.call("GET", "/_cat/elections", params={"v": "true", "prefix": name}).text
    assert text.split()[:7] == ["name", "leader", "term", "value", "lease_ms", "held_ms", "node"]
    assert ok(locks.stats())["total"]["election_leaders"] >= before + 2
    parts = ok(locks.diagnostics())["core"]["partitions"]
    assert sum(p["election_leaders"] for p in parts) >= 2
    ok(locks.release(name, "a"))
    ok(call(locks, name, "resign", candidate="a"))
    ok(call(locks, other, "resign", candidate="b"))
