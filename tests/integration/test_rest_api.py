"""Every REST endpoint of docs/API.md at least once on a real node over HTTP: happy paths,
response shapes, defaults, and the documented 4xx outcomes of each call. Bad input lives in
test_bad_input.py, multi-client behaviour in test_behaviour.py."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from lockclient import (LockClient, assert_error, duration_ms, ok, tree_root, unique,
                        wait_for_waiter, wait_until)

pytestmark = pytest.mark.every_version  # also on 8.19 (Makefile integration-test)

SETTINGS = ("locks.lease.default", "locks.lease.max", "locks.wait.default", "locks.wait.max",
            "locks.priority.aging", "locks.max_waiters", "locks.max_keys_per_request",
            "locks.partitions", "locks.durability")
STAT_FIELDS = ("acquires", "grants", "conflicts", "timeouts", "expiries", "deadlocks",
               "cancelled", "held", "waiting")
CAT_COLUMNS = ["key", "scope", "owner", "mode", "token", "lease_ms", "held_ms", "node"]


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(max_workers=8) as ex:
        yield ex


# --- POST /_locks/{key}/_acquire ------------------------------------------------------------

def test_acquire_with_only_owner_uses_the_defaults(locks):
    k, me = unique(), unique("owner")
    g = ok(locks.acquire(k, me))
    assert g["acquired"] is True
    assert (g["key"], g["owner"], g["mode"], g["scope"]) == (k, me, "exclusive", "key")
    assert isinstance(g["fencing_token"], int) and 0 < g["fencing_token"] < 2 ** 63
    assert 25_000 < g["lease_ms"] <= 30_000, "locks.lease.default is 30s"
    assert g["waited_ms"] == 0 and g["reentrant"] is False
    assert locks.holders(k) == [me]


@pytest.mark.parametrize("priority", [0, 9, 5, "background", "foreground"])
def test_acquire_accepts_every_body_field(locks, priority):
    k, me = unique(), unique("owner")
    g = ok(locks.acquire(k, me, mode="shared", scope="key", priority=priority, wait="1s",
                         lease="5s"))
    assert (g["key"], g["owner"], g["mode"], g["scope"]) == (k, me, "shared", "key")
    assert 3_000 < g["lease_ms"] <= 5_000
    holder = locks.state(k)["holders"][0]
    assert holder["owner"] == me and holder["mode"] == "shared"
    assert holder["fencing_token"] == g["fencing_token"]


def test_durations_as_json_numbers_are_milliseconds(locks):
    k, me = unique(), unique("owner")
    g = ok(locks.acquire(k, me, lease=4000, wait=0))
    assert 2_000 < g["lease_ms"] <= 4_000
    started = time.monotonic()
    r = locks.acquire(k, unique("other"), wait=300)
    elapsed = time.monotonic() - started
    assert_error(r, 409, "lock_wait_timeout_exception")
    assert elapsed >= 0.25, "a numeric wait of 300 waits 300ms, not 300s nor 0"


def test_reacquire_by_the_holder_is_reentrant_with_the_same_token(locks):
    k, me = unique(), unique("owner")
    first = ok(locks.acquire(k, me))
    again = ok(locks.acquire(k, me, wait="1s"))
    assert again["reentrant"] is True and again["fencing_token"] == first["fencing_token"]
    assert locks.holders(k) == [me]


def test_wait_on_a_free_key_is_granted_at_once(locks):
    k, me = unique(), unique("owner")
    started = time.monotonic()
    g = ok(locks.acquire(k, me, wait="10s"))
    assert time.monotonic() - started < 5, "a free key is granted without waiting out `wait`"
    assert g["waited_ms"] < 5_000


def test_try_lock_on_a_held_key_is_409_naming_the_holder(locks):
    k, holder = unique(), unique("holder")
    ok(locks.acquire(k, holder))
    err = assert_error(locks.acquire(k, unique("other")), 409, "lock_conflict_exception", holder)
    assert err["holders"] in (holder, [holder])
    assert locks.holders(k) == [holder]


def test_wait_that_runs_out_is_409_wait_timeout_and_leaves_no_waiter(locks):
    k, holder, other = unique(), unique("holder"), unique("other")
    ok(locks.acquire(k, holder))
    started = time.monotonic()
    r = locks.acquire(k, other, wait="400ms")
    elapsed = time.monotonic() - started
    assert_error(r, 409, "lock_wait_timeout_exception")
    assert elapsed >= 0.35, f"answered after {elapsed:.3f}s, before the wait ran out"
    state = locks.state(k)
    assert [h["owner"] for h in state["holders"]] == [holder] and state["waiters"] == []


def test_a_queued_acquire_is_granted_on_release_with_waited_ms(locks, pool):
    k, holder, waiter = unique(), unique("holder"), unique("waiter")
    t1 = ok(locks.acquire(k, holder))["fencing_token"]
    lc = LockClient(locks.base_url)
    fut = pool.submit(lc.acquire, k, waiter, wait="20s")
    wait_for_waiter(locks, k, waiter)
    time.sleep(0.05)  # let the waiter accumulate a measurable wait (not synchronisation)
    assert not fut.done()
    ok(locks.release(k, holder, fencing_token=t1))
    g = ok(fut.result(timeout=20))
    assert g["owner"] == waiter and g["fencing_token"] > t1
    assert g["waited_ms"] >= 40
    assert locks.holders(k) == [waiter]


# --- POST /_locks/{key}/_release ------------------------------------------------------------

def test_release_answers_the_released_grant(locks):
    k, me = unique(), unique("owner")
    token = ok(locks.acquire(k, me))["fencing_token"]
    r = ok(locks.release(k, me, fencing_token=token))
    assert r == {**r, "released": True, "key": k, "owner": me, "fencing_token": token}
    assert locks.state(k)["holders"] == []
    assert_error(locks.release(k, me), 404, "lock_not_held_exception")


def test_release_without_token_releases_the_owners_lock(locks):
    k, me = unique(), unique("owner")
    token = ok(locks.acquire(k, me))["fencing_token"]
    assert ok(locks.release(k, me))["fencing_token"] == token
    assert locks.holders(k) == []


def test_release_of_a_tree_lock_needs_the_tree_scope(locks):
    path, me = f"/{tree_root()}/b", unique("owner")
    ok(locks.acquire(path, me, scope="tree"))
    assert locks.holders(path, scope="tree") == [me]
    ok(locks.release(path, me, scope="tree"))
    assert locks.holders(path, scope="tree") == []


# --- POST /_locks/{key}/_renew --------------------------------------------------------------

def test_renew_extends_the_lease_and_keeps_the_token(locks):
    k, me = unique(), unique("owner")
    g = ok(locks.acquire(k, me, lease="2s"))
    assert g["lease_ms"] <= 2_000
    r = ok(locks.renew(k, me, fencing_token=g["fencing_token"], lease="1m"))
    assert r["renewed"] is True and (r["key"], r["owner"]) == (k, me)
    assert r["fencing_token"] == g["fencing_token"]
    assert 50_000 < r["lease_ms"] <= 60_000
    assert locks.state(k)["holders"][0]["lease_ms"] > 50_000


def test_renew_without_lease_or_token_is_accepted(locks):
    k, me = unique(), unique("owner")
    g = ok(locks.acquire(k, me, lease="10s"))
    r = ok(locks.renew(k, me))
    assert r["fencing_token"] == g["fencing_token"] and r["lease_ms"] > 0


def test_renew_by_a_non_holder_is_404(locks):
    k, me = unique(), unique("owner")
    ok(locks.acquire(k, me))
    assert_error(locks.renew(k, unique("other")), 404, "lock_not_held_exception")
    assert_error(locks.renew(unique(), me), 404, "lock_not_held_exception")
    assert locks.holders(k) == [me]


# --- POST /_locks/_acquire and /_locks/_release ----------------------------------------------

def test_multi_acquire_grants_every_key_and_multi_release_frees_them(locks):
    me = unique("owner")
    k1, k2, k3 = unique(), unique(), unique()
    tree = f"/{tree_root()}/x"
    g = ok(locks.multi_acquire(me, [{"key": k1}, {"key": k2, "mode": "shared"},
                                    {"key": k3, "mode": "exclusive", "scope": "key"},
                                    {"key": tree, "scope": "tree"}], wait="1s", lease="20s",
                               priority="background"))
    assert g["acquired"] is True and g["owner"] == me
    by_key = {entry["key"]: entry for entry in g["locks"]}
    assert set(by_key) == {k1, k2, k3, tree}
    assert by_key[k1]["mode"] == "exclusive" and by_key[k2]["mode"] == "shared"
    assert by_key[k1]["scope"] == "key" and by_key[tree]["scope"] == "tree"
    assert all(isinstance(e["fencing_token"], int) and e["fencing_token"] > 0 for e in g["locks"])
    assert 15_000 < g["lease_ms"] <= 20_000 and g["waited_ms"] >= 0
    for k in (k1, k2, k3):
        assert locks.holders(k) == [me]
    assert locks.holders(tree, scope="tree") == [me]

    r = ok(locks.multi_release(me, [{"key": k1}, {"key": tree, "scope": "tree"}]))
    released = {e["key"]: e["fencing_token"] for e in r["released"]}
    assert released == {k1: by_key[k1]["fencing_token"], tree: by_key[tree]["fencing_token"]}
    assert locks.holders(k1) == [] and locks.holders(tree, scope="tree") == []
    assert locks.holders(k2) == [me]

    rest = ok(locks.multi_release(me, all=True))
    assert {e["key"] for e in rest["released"]} == {k2, k3}
    assert locks.holders(k2) == [] and locks.holders(k3) == []


def test_multi_acquire_waits_for_a_held_key_then_gets_all(locks, pool):
    me, other = unique("owner"), unique("other")
    k1, k2 = unique(), unique()
    ok(locks.acquire(k2, other))
    lc = LockClient(locks.base_url)
    fut = pool.submit(lc.multi_acquire, me, [{"key": k1}, {"key": k2}], wait="20s")
    wait_for_waiter(locks, k2, me)
    ok(locks.release(k2, other))
    g = ok(fut.result(timeout=20))
    assert {e["key"] for e in g["locks"]} == {k1, k2}
    assert locks.holders(k1) == [me] and locks.holders(k2) == [me]


# --- sessions -------------------------------------------------------------------------------

def test_session_create_keepalive_acquire_and_delete(locks):
    me = unique("owner")
    s = ok(locks.session_create(me, ttl="30s"))
    sid = s["session"]
    assert isinstance(sid, str) and sid and s["owner"] == me
    assert 25_000 < s["ttl_ms"] <= 30_000

    ka = ok(locks.session_keepalive(sid, me))
    assert ka["session"] == sid and 25_000 < ka["ttl_ms"] <= 30_000

    k1, k2 = unique(), unique()
    g1 = ok(locks.acquire(k1, me, session=sid, lease="1s"))
    assert g1["lease_ms"] > 1_000, "under a session the lock follows the session, not `lease`"
    ok(locks.multi_acquire(me, [{"key": k2}], session=sid))
    assert locks.holders(k1) == [me] and locks.holders(k2) == [me]

    ended = ok(locks.session_delete(sid, me))
    assert ended["ended"] is True and ended["session"] == sid
    assert sorted(ended["released"]) == sorted([k1, k2])
    assert locks.holders(k1) == [] and locks.holders(k2) == []

    assert_error(locks.session_keepalive(sid, me), 404, "session_not_found_exception")
    assert_error(locks.session_delete(sid, me), 404, "session_not_found_exception")
    assert_error(locks.acquire(unique(), me, session=sid), 404, "session_not_found_exception")


def test_session_default_ttl(locks):
    me = unique("owner")
    s = ok(locks.session_create(me))
    assert s["ttl_ms"] > 0
    ok(locks.session_delete(s["session"], me))


# --- GET /_locks/{key} ----------------------------------------------------------------------

def test_get_lock_lists_holders_and_waiters(locks, pool, single_node):
    k, holder, waiter = unique(), unique("holder"), unique("waiter")
    g = ok(locks.acquire(k, holder, lease="20s"))
    lc = LockClient(locks.base_url)
    fut = pool.submit(lc.acquire, k, waiter, mode="shared", priority="background", wait="20s")
    entry = wait_for_waiter(locks, k, waiter)
    assert entry["mode"] == "shared" and entry["priority"] >= 2
    assert isinstance(entry["waited_ms"], int) and entry["waited_ms"] >= 0

    state = locks.state(k)
    assert state["key"] == k
    (h,) = state["holders"]
    assert (h["owner"], h["mode"], h["fencing_token"]) == (holder, "exclusive", g["fencing_token"])
    assert 0 < h["lease_ms"] <= 20_000 and h["node"] == single_node.name

    ok(locks.release(k, holder))
    assert ok(fut.result(timeout=20))["owner"] == waiter
    state = locks.state(k)
    assert [x["owner"] for x in state["holders"]] == [waiter] and state["waiters"] == []


def test_get_free_key_is_200_with_empty_lists(locks):
    k = unique()
    assert locks.state(k) == {**locks.state(k), "key": k, "holders": [], "waiters": []}
    assert locks.state(f"/{tree_root()}/a", scope="tree")["holders"] == []


# --- GET /_locks ----------------------------------------------------------------------------

def test_list_filters_by_owner_and_prefix_and_limits_size(locks, single_node):
    prefix = unique("list")
    me, other = unique("owner"), unique("owner")
    mine = [f"{prefix}-{i}" for i in range(3)]
    tokens = {k: ok(locks.acquire(k, me))["fencing_token"] for k in mine}
    theirs = f"{prefix}-x"
    ok(locks.acquire(theirs, other, mode="shared"))

    by_owner = ok(locks.list(owner=me))["locks"]
    assert {e["key"] for e in by_owner} == set(mine)
    for e in by_owner:
        assert (e["owner"], e["mode"], e["scope"]) == (me, "exclusive", "key")
        assert e["fencing_token"] == tokens[e["key"]]
        assert e["lease_ms"] > 0 and e["node"] == single_node.name

    by_prefix = ok(locks.list(prefix=prefix))["locks"]
    assert {(e["key"], e["owner"]) for e in by_prefix} == {*((k, me) for k in mine), (theirs, other)}

    both = ok(locks.list(owner=other, prefix=prefix))["locks"]
    assert [(e["key"], e["mode"]) for e in both] == [(theirs, "shared")]

    limited = ok(locks.list(prefix=prefix, size=2))["locks"]
    assert len(limited) == 2 and {e["key"] for e in limited} <= {*mine, theirs}

    ok(locks.multi_release(me, all=True))
    assert ok(locks.list(owner=me))["locks"] == []


# --- GET /_cat/locks ------------------------------------------------------------------------

def test_cat_locks_follows_the_cat_conventions(locks, single_node):
    k, me = unique("cat"), unique("owner")
    token = ok(locks.acquire(k, me))["fencing_token"]

    verbose = locks.cat(v="true")
    assert verbose.status_code == 200 and verbose.headers["Content-Type"].startswith("text/plain")
    lines = verbose.text.splitlines()
    assert lines[0].split() == CAT_COLUMNS
    row = next(line.split() for line in lines[1:] if line.split()[:1] == [k])
    assert row[1:4] == ["key", me, "exclusive"] and row[4] == str(token)
    assert row[7] == single_node.name

    plain = locks.cat().text.splitlines()
    assert plain and plain[0].split() != CAT_COLUMNS, "no header without v"

    rows = ok(locks.cat(format="json"))
    assert isinstance(rows, list)
    mine = [r for r in rows if r["key"] == k]
    assert len(mine) == 1 and set(mine[0]) == set(CAT_COLUMNS)
    assert mine[0]["owner"] == me and str(mine[0]["token"]) == str(token)

    narrow = locks.cat(h="key,owner", format="json").json()
    assert {"key": k, "owner": me} in narrow and all(set(r) == {"key", "owner"} for r in narrow)

    help_text = locks.cat(help="true").text
    for column in CAT_COLUMNS:
        assert column in help_text

    ok(locks.acquire(f"{k}-2", me))
    filtered = ok(locks.cat(owner=me, prefix=k, format="json"))
    assert sorted(r["key"] for r in filtered) == [k, f"{k}-2"]
    assert len(ok(locks.cat(owner=me, size=1, format="json"))) == 1
    ok(locks.multi_release(me, all=True))


# --- GET /_locks/_stats ---------------------------------------------------------------------

def _check_stat_block(block: dict) -> None:
    for field in STAT_FIELDS:
        assert isinstance(block[field], int) and block[field] >= 0, (field, block)
    for hist in ("wait_time_ms", "hold_time_ms"):
        h = block[hist]
        assert {"p50", "p90", "p99", "max"} <= set(h), h
        assert h["p50"] <= h["p90"] <= h["p99"] <= h["max"], h


def test_stats_per_node_and_total(locks, single_node):
    before = ok(locks.stats())
    k, me = unique(), unique("owner")
    ok(locks.acquire(k, me))
    assert_error(locks.acquire(k, unique("other")), 409, "lock_conflict_exception")
    assert_error(locks.acquire(k, unique("other"), wait="50ms"), 409, "lock_wait_timeout_exception")
    during = ok(locks.stats())
    ok(locks.release(k, me))

    assert during["_nodes"] == {"total": 1, "successful": 1, "failed": 0}
    assert during["cluster_name"] == single_node.cluster
    (node,) = during["nodes"].values()
    assert node["name"] == single_node.name
    _check_stat_block(node["locks"])
    total = during["total"]
    _check_stat_block(total)
    for field in STAT_FIELDS:
        assert total[field] == node["locks"][field], "one node: the total is that node"
    b = before["total"]
    assert total["acquires"] >= b["acquires"] + 3
    assert total["grants"] >= b["grants"] + 1
    assert total["conflicts"] >= b["conflicts"] + 1
    assert total["timeouts"] >= b["timeouts"] + 1
    assert total["held"] >= 1

    local = ok(locks.call("GET", "/_locks/_stats/_local"))
    assert local["_nodes"]["total"] == 1 and list(local["nodes"]) == list(during["nodes"])


# --- GET /_locks/_node/diagnostics ----------------------------------------------------------

def test_recovery_grace_follows_the_highest_lease_max_in_force(locks):
    """Raising `locks.lease.max` on a running cluster raises the recovery grace (a lease granted
    under the higher maximum may be running when an owner dies); lowering it again does not lower
    the grace, since such a lease may still be running."""
    def grace_ms():
        return duration_ms(ok(locks.diagnostics())["settings"]["locks.recovery.grace"])

    before = grace_ms()
    ok(locks.put_cluster_settings({"locks.lease.max": "40m"}))
    try:
        assert grace_ms() == 40 * 60_000 + 30_000
    finally:
        ok(locks.put_cluster_settings({"locks.lease.max": None}))
    assert grace_ms() == 40 * 60_000 + 30_000 > before


def test_node_diagnostics_report_node_plugin_settings_and_core(locks, single_node, pool):
    d = ok(locks.diagnostics())
    local = next(iter(ok(locks.call("GET", "/_nodes/_local"))["nodes"].items()))
    assert d["node"] == {**d["node"], "id": local[0], "name": single_node.name}
    plugin = d["plugin"]
    assert plugin["version"] and plugin["native_version"]
    assert plugin["native_library"].endswith("libeslm.so")
    settings = d["settings"]
    for name in SETTINGS:
        assert name in settings, f"effective setting {name} missing: {settings}"
    assert duration_ms(settings["locks.lease.default"]) == 30_000
    assert duration_ms(settings["locks.wait.max"]) == 300_000
    assert str(settings["locks.durability"]) == "replicated"
    core = d["core"]
    assert core["core_version"] and core["bridge_version"]
    assert core["partitions"], "a single node owns every partition"
    for p in core["partitions"]:
        assert p["state"] == "active" and p["epoch"] >= 1
        assert p["held"] >= 0 and p["waiting"] >= 0

    def held() -> int:
        return sum(p["held"] for p in ok(locks.diagnostics())["core"]["partitions"])

    # Leases of earlier tests on this shared node may end meanwhile (only ever fewer holders):
    # a count is taken as the one lock's only when the total before it equals the total after.
    for _ in range(5):
        k, holder = unique("diag"), unique("holder")
        before = held()
        ok(locks.acquire(k, holder))
        during = held()
        ok(locks.release(k, holder))
        if held() == before:
            break
    assert during == before + 1, (before, during)

    k, holder, waiter = unique("diag"), unique("holder"), unique("waiter")
    ok(locks.acquire(k, holder))
    lc = LockClient(locks.base_url)
    fut = pool.submit(lc.acquire, k, waiter, wait="20s")
    wait_for_waiter(locks, k, waiter)
    d2 = ok(locks.diagnostics())["core"]
    assert sum(p["waiting"] for p in d2["partitions"]) >= 1
    assert k in json.dumps(d2["oldest_waiters"]), d2["oldest_waiters"]
    ok(locks.release(k, holder))
    ok(fut.result(timeout=20))
    ok(locks.release(k, waiter))


def test_node_diagnostics_hot_keys_rank_by_acquires(locks):
    hot = ok(locks.diagnostics())["core"]["hot_keys"]
    counts = [h["acquires"] for h in hot]
    assert counts == sorted(counts, reverse=True)
    n = (counts[0] if counts else 0) + 5
    assert n <= 2_000, f"the suite's own keys should not be this hot: {hot[:3]}"
    # contended acquires (a holder plus refused try-locks): hot by any reasonable count
    k, me, other = unique("hot"), unique("owner"), unique("other")
    ok(locks.acquire(k, me))
    for _ in range(n):
        assert_error(locks.acquire(k, other), 409, "lock_conflict_exception")
    top = ok(locks.diagnostics())["core"]["hot_keys"][0]
    assert top["key"] == k and top["acquires"] >= n
    ok(locks.release(k, me))


# --- POST /_locks/{key}/_force_release ------------------------------------------------------

def test_force_release_evicts_the_holder_bumps_the_fence_and_logs(locks, single_node):
    k, holder = unique("force"), unique("holder")
    token = ok(locks.acquire(k, holder))["fencing_token"]
    r = ok(locks.force_release(k, reason="stuck batch job"))
    assert r["released"] == [{**r["released"][0], "owner": holder, "fencing_token": token}]
    assert len(r["released"]) == 1
    assert locks.holders(k) == []
    assert_error(locks.release(k, holder, fencing_token=token), 404, "lock_not_held_exception")
    assert_error(locks.renew(k, holder, fencing_token=token), 404, "lock_not_held_exception")
    assert ok(locks.acquire(k, unique("next")))["fencing_token"] > token

    def logged():
        text = single_node.log_file.read_text(errors="replace")
        return any("WARN" in line and k in line for line in text.splitlines())
    wait_until(logged, 10, interval=0.1, message="force-release logged at WARN")


def test_force_release_of_shared_holders_and_trees(locks):
    k, a, b = unique(), unique("a"), unique("b")
    ok(locks.acquire(k, a, mode="shared"))
    ok(locks.acquire(k, b, mode="shared"))
    released = ok(locks.force_release(k))["released"]
    assert sorted(e["owner"] for e in released) == sorted([a, b])
    assert locks.holders(k) == []

    path = f"/{tree_root()}/q"
    ok(locks.acquire(path, a, scope="tree"))
    assert [e["owner"] for e in ok(locks.force_release(path, scope="tree"))["released"]] == [a]
    assert locks.holders(path, scope="tree") == []


def test_force_release_of_a_free_key_is_404(locks):
    assert_error(locks.force_release(unique()), 404, "lock_not_held_exception")


# --- settings -------------------------------------------------------------------------------

def test_dynamic_caps_apply_at_once_and_reset(locks):
    # a default above its max is refused as a whole
    assert_error(locks.put_cluster_settings({"locks.lease.max": "3s"}), 400, "illegal_argument_exception",
                 "locks.lease.default", "locks.lease.max")
    try:
        assert ok(locks.put_cluster_settings({"locks.wait.max": "2s", "locks.lease.max": "3s",
                                              "locks.lease.default": "2s"}))
        assert_error(locks.acquire(unique(), "o", wait="3s"), 400, "illegal_argument_exception",
                     "[wait]", "locks.wait.max")
        assert_error(locks.acquire(unique(), "o", lease="4s"), 400, "illegal_argument_exception",
                     "[lease]", "locks.lease.max")
        effective = ok(locks.diagnostics())["settings"]
        assert duration_ms(effective["locks.wait.max"]) == 2_000
        assert duration_ms(effective["locks.lease.max"]) == 3_000
        assert 1_000 < ok(locks.acquire(unique(), "o"))["lease_ms"] <= 2_000
    finally:
        ok(locks.put_cluster_settings({"locks.wait.max": None, "locks.lease.max": None,
                                       "locks.lease.default": None}))
    k = unique()
    ok(locks.acquire(k, "o", wait="3s", lease="4s"))
    assert duration_ms(ok(locks.diagnostics())["settings"]["locks.wait.max"]) == 300_000


def test_dynamic_default_lease_applies_to_new_grants(locks):
    try:
        ok(locks.put_cluster_settings({"locks.lease.default": "45s"}))
        g = ok(locks.acquire(unique(), unique("owner")))
        assert 40_000 < g["lease_ms"] <= 45_000
    finally:
        ok(locks.put_cluster_settings({"locks.lease.default": None}))


def test_dynamic_default_wait_makes_acquire_queue(locks):
    k, holder = unique(), unique("holder")
    ok(locks.acquire(k, holder))
    try:
        ok(locks.put_cluster_settings({"locks.wait.default": "300ms"}))
        started = time.monotonic()
        assert_error(locks.acquire(k, unique("other")), 409, "lock_wait_timeout_exception")
        assert time.monotonic() - started >= 0.25
    finally:
        ok(locks.put_cluster_settings({"locks.wait.default": None}))
    assert_error(locks.acquire(k, unique("other")), 409, "lock_conflict_exception")


def test_max_waiters_limit_is_429(locks, pool):
    k, holder = unique(), unique("holder")
    ok(locks.acquire(k, holder))
    futures = []
    try:
        ok(locks.put_cluster_settings({"locks.max_waiters": 2}))
        for i in range(2):
            lc = LockClient(locks.base_url)
            futures.append(pool.submit(lc.acquire, k, f"w{i}", wait="20s"))
            wait_for_waiter(locks, k, f"w{i}")
        assert_error(locks.acquire(k, "w2", wait="20s"), 429, "lock_limit_exceeded_exception")
        assert sorted(locks.waiters(k)) == ["w0", "w1"]
    finally:
        ok(locks.put_cluster_settings({"locks.max_waiters": None}))
        ok(locks.release(k, holder))
    for i, fut in enumerate(futures):
        ok(fut.result(timeout=20))
        ok(locks.release(k, f"w{i}"))


def test_max_keys_per_request_is_dynamic(locks):
    me = unique("owner")
    keys = [{"key": unique()} for _ in range(3)]
    try:
        ok(locks.put_cluster_settings({"locks.max_keys_per_request": 2}))
        assert_error(locks.multi_acquire(me, keys), 400, "illegal_argument_exception", "[locks]")
        assert all(locks.holders(k["key"]) == [] for k in keys)
    finally:
        ok(locks.put_cluster_settings({"locks.max_keys_per_request": None}))
    ok(locks.multi_acquire(me, keys))
    ok(locks.multi_release(me, all=True))
