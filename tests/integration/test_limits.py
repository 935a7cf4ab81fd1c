"""Issue 13, bounded memory: the `locks.limits.*` settings on a real node over HTTP.

One node of this module's own, started with small limits (`-E`); the memory cap is lowered
through `PUT _cluster/settings` (a dynamic change). Each limit is filled: exactly 429
`lock_limit_exceeded_exception` naming the setting, the node alive, the holders still
renewable and releasable, and (`_locks/_stats`) the memory returned after release. Bodies are
bounded before parsing (413) and while parsing (400 naming the field). Run with `-s` to see the
memory figures.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from cluster_kit import OneNode
from lockclient import LockClient, assert_error, ok, unique, wait_for_waiter

LIMITS = {
    "locks.limits.max_locks": 20,
    "locks.limits.max_locks_per_owner": 8,
    "locks.limits.max_waiters": 4,
    "locks.limits.max_waiters_per_owner": 2,
    "locks.limits.max_sessions": 6,
    "locks.limits.max_sessions_per_owner": 3,
    "locks.limits.max_memory": "8mb",
}
LIMIT = "lock_limit_exceeded_exception"
ILLEGAL = "illegal_argument_exception"


ONE_NODE = OneNode("eslm-it-limits", LIMITS)


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(max_workers=8) as ex:
        yield ex


def refused(response, setting: str) -> dict:
    """Exactly 429 lock_limit_exceeded_exception naming `setting` in the reason and metadata."""
    err = assert_error(response, 429, LIMIT, setting)
    assert err["limit"] == setting, response.text
    assert setting in err["reason"], response.text
    return err


def node_stats(lc: LockClient) -> dict:
    nodes = ok(lc.stats())["nodes"]
    assert len(nodes) == 1
    return next(iter(nodes.values()))["locks"]


def memory(lc: LockClient) -> int:
    return node_stats(lc)["memory_bytes"]


def alive_and_empty(lc: LockClient) -> None:
    """The node answers, and nothing of this module is held or queued any more."""
    s = node_stats(lc)
    assert (s["held"], s["waiting"], s["sessions"]) == (0, 0, 0), s


def test_stats_and_diagnostics_report_memory_and_the_limits(lc):
    s = node_stats(lc)
    assert s["limits"]["max_locks"] == 20 and s["limits"]["max_sessions_per_owner"] == 3, s
    assert s["limits"]["max_memory_bytes"] == 8 * 1024 * 1024, s
    assert s["partitions"][0]["memory_bytes"] == s["memory_bytes"], s
    assert set(s["partitions"][0]["memory"]) >= {"keys", "owners", "locks", "waiters", "sessions",
                                                   "deadlines", "total"}
    d = ok(lc.diagnostics())
    assert d["core"]["partitions"][0]["memory_bytes"] == s["memory_bytes"]
    assert d["core"]["config"]["limits"]["max_waiters_per_owner"] == 2
    assert d["settings"]["locks.limits.max_memory"] == "8mb"
    assert d["settings"]["locks.limits.max_locks"] == 20
    total = ok(lc.stats())["total"]
    assert total["memory_bytes"] == s["memory_bytes"]


def test_max_locks_per_owner_then_max_locks(lc):
    before = memory(lc)
    owners = [unique("o") for _ in range(3)]
    held = {o: [unique("k") for _ in range(8)] for o in owners}
    for o in owners[:2]:
        for k in held[o]:
            ok(lc.acquire(k, o, lease="30s"))
    refused(lc.acquire(unique("k"), owners[0]), "locks.limits.max_locks_per_owner")
    for k in held[owners[2]][:4]:
        ok(lc.acquire(k, owners[2]))
    at_cap = memory(lc)
    refused(lc.acquire(unique("k"), owners[2]), "locks.limits.max_locks")
    refused(lc.acquire(unique("k"), unique("o")), "locks.limits.max_locks")
    # Holders keep working: a retry (same token), renew, GET, list, release.
    g = ok(lc.acquire(held[owners[0]][0], owners[0]))
    ok(lc.renew(held[owners[0]][0], owners[0], fencing_token=g["fencing_token"], lease="60s"))
    assert lc.holders(held[owners[1]][3]) == [owners[1]]
    assert len(ok(lc.list(owner=owners[0], size=100))["locks"]) == 8
    for o in owners:
        ok(lc.multi_release(o, all=True))
    ok(lc.acquire(unique("k"), unique("o")))  # room again
    after = memory(lc)
    print(f"\nmax_locks: memory_bytes before={before} at_cap(20 locks)={at_cap} after_release={after}")
    assert at_cap > before and after < at_cap
    for lock in ok(lc.list(size=100))["locks"]:
        ok(lc.release(lock["key"], lock["owner"]))
    alive_and_empty(lc)


def test_max_waiters_per_owner_then_max_waiters(lc, own_node, pool):
    keys = [unique("busy") for _ in range(5)]
    holder = unique("holder")
    for k in keys:
        ok(lc.acquire(k, holder))
    clients = []
    futures = []

    def queue(key, owner):
        c = LockClient(own_node.url)
        clients.append(c)
        futures.append((key, owner, pool.submit(c.acquire, key, owner, wait="30s")))
        wait_for_waiter(lc, key, owner)

    try:
        queue(keys[0], "w1")
        queue(keys[1], "w1")
        refused(lc.acquire(keys[2], "w1", wait="30s"), "locks.limits.max_waiters_per_owner")
        queue(keys[2], "w2")
        queue(keys[3], "w3")
        refused(lc.acquire(keys[4], "w4", wait="30s"), "locks.limits.max_waiters")
        assert node_stats(lc)["waiting"] == 4
        # A try-lock never queues: it answers the conflict as usual.
        assert_error(lc.acquire(keys[4], "w4"), 409, "lock_conflict_exception")
        g = ok(lc.acquire(keys[0], holder))
        ok(lc.renew(keys[0], holder, fencing_token=g["fencing_token"]))
    finally:
        for k in keys:
            ok(lc.release(k, holder))
    for key, owner, fut in futures:
        assert ok(fut.result(timeout=30))["owner"] == owner
        ok(lc.release(key, owner))
    for c in clients:
        c.close()
    alive_and_empty(lc)


def test_max_sessions_per_owner_then_max_sessions(lc):
    before = memory(lc)
    s1 = [ok(lc.session_create("s-owner-1", ttl="60s"))["session"] for _ in range(3)]
    refused(lc.session_create("s-owner-1", ttl="60s"), "locks.limits.max_sessions_per_owner")
    s2 = [ok(lc.session_create("s-owner-2", ttl="60s"))["session"] for _ in range(3)]
    at_cap = memory(lc)
    refused(lc.session_create("s-owner-3", ttl="60s"), "locks.limits.max_sessions")
    k = unique("k")
    ok(lc.acquire(k, "s-owner-1", session=s1[0]))
    ok(lc.session_keepalive(s1[0], "s-owner-1"))
    for sid, owner in [(s, "s-owner-1") for s in s1] + [(s, "s-owner-2") for s in s2]:
        ok(lc.session_delete(sid, owner))
    assert lc.holders(k) == []
    after = memory(lc)
    print(f"\nmax_sessions: memory_bytes before={before} at_cap(6 sessions)={at_cap} after_end={after}")
    assert at_cap > before and after < at_cap
    alive_and_empty(lc)


def test_memory_cap_set_dynamically(lc):
    """The cap is lowered to a little above what the partition holds: big keys fill it."""
    before = memory(lc)
    cap = before + 6000
    ok(lc.put_cluster_settings({"locks.limits.max_memory": f"{cap}b"}))
    held = []
    try:
        refusal = None
        for i in range(20):  # locks.limits.max_locks: the cap must refuse before that
            k = f"mem-{i:02d}-" + "x" * 440
            r = lc.acquire(k, f"mem-owner-{i}", lease="2s")
            if r.status_code != 200:
                refusal = r
                break
            held.append((k, f"mem-owner-{i}", r.json()["fencing_token"]))
        assert refusal is not None, f"no refusal after {len(held)} locks"
        refused(refusal, "locks.limits.max_memory")
        at_cap = memory(lc)
        assert at_cap >= cap, (at_cap, cap)
        refused(lc.session_create(unique("o"), ttl="10s"), "locks.limits.max_memory")
        k0, o0, t0 = held[0]
        ok(lc.renew(k0, o0, fencing_token=t0, lease="2s"))
        assert ok(lc.acquire(k0, o0))["fencing_token"] == t0
        for k, o, _ in held:
            ok(lc.release(k, o))
        # Released keys stay interned as idle entries (reused by the next lock on them) and
        # stale lease deadlines stay in the heap until they fall due (2 s): both are counted.
        after = memory(lc)
        assert after < at_cap
        assert after <= before + len(held) * 700, (after, before)
        # At the cap the idle entries are freed first: a cap just above the baseline still
        # grants one more lock, and the partition is back at its baseline plus that lock.
        ok(lc.put_cluster_settings({"locks.limits.max_memory": f"{before + 1000}b"}))
        extra, extra_owner = unique("k"), unique("o")
        ok(lc.acquire(extra, extra_owner))
        swept = memory(lc)
        ok(lc.release(extra, extra_owner))
        print(f"\nmax_memory: cap={cap} memory_bytes before={before} at_cap({len(held)} locks of "
              f"{len(held[0][0])}-byte keys)={at_cap} after_release={after} "
              f"after_sweep_plus_one_short_lock={swept}")
        assert swept <= before + 1000, (swept, before)
    finally:
        ok(lc.put_cluster_settings({"locks.limits.max_memory": None}))
    for lock in ok(lc.list(size=100))["locks"]:
        ok(lc.release(lock["key"], lock["owner"]))
    alive_and_empty(lc)


@pytest.mark.parametrize("setting,value", [
    ("locks.limits.max_locks", 0),
    ("locks.limits.max_waiters_per_owner", -1),
    ("locks.limits.max_sessions", "many"),
    ("locks.limits.max_memory", "0b"),
    ("locks.limits.max_memory", "lots"),
])
def test_invalid_limit_settings_are_400_naming_the_setting(lc, setting, value):
    r = lc.put_cluster_settings({setting: value})
    assert_error(r, 400, "illegal_argument_exception", setting)
    assert node_stats(lc)["limits"]["max_locks"] == 20


def test_bodies_are_bounded_before_and_while_parsing(lc):
    me = unique("owner")
    too_many = {"owner": me, "locks": [{"key": unique("k")} for _ in range(101)]}
    assert_error(lc.multi_acquire(me, too_many["locks"]), 400, ILLEGAL, "[locks]", "100")
    assert_error(lc.multi_release(me, [{"key": k["key"]} for k in too_many["locks"]]), 400, ILLEGAL,
                 "[locks]")
    huge = json.dumps({"owner": me, "locks": [{"key": "k" * 500 + str(i)} for i in range(5000)]})
    r = lc.call("POST", "/_locks/_acquire", raw=huge)
    assert_error(r, 413, "status_exception", "too large")
    assert_error(lc.acquire(unique("k"), "o" * 513), 400, ILLEGAL, "[owner]", "512")
    assert_error(lc.multi_acquire(me, [{"key": "é" * 257}]), 400, ILLEGAL, "[key]", "512")
    assert ok(lc.list(owner=me))["locks"] == []
    alive_and_empty(lc)
