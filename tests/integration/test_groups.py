"""Groups (docs/API.md "Groups", docs/LOCK_CORE.md "Groups") on real nodes over HTTP: created,
listed, joined with capabilities, observed, updated, left and deleted with the errors a tooz
driver maps (group not created, already exists, not empty, member already joined, not a member);
a member whose lease or session ends leaves by itself and wakes an observer; bad input is a 400
naming the field; and on three nodes a kill -9 of the group's owner keeps the group, its members,
their capabilities and tokens (the state is replicated like the locks)."""

from __future__ import annotations

import threading

import pytest

from cluster_kit import http, live, owner_that_is_not_the_master, rejoin, served, settled, ThreeNodes
from lockclient import LockClient, assert_error, enc, ok, unique, wait_until

WAKE_S = 3.0  # a change -> an observer waiting on it answered


def group_call(lc: LockClient, method: str, name: str, action: str = "", body=None, **params):
    path = f"/_groups/{enc(name)}" + (f"/_{action}" if action else "")
    return lc.call(method, path, body, params=params or None)


def join(lc, name, member, **body):
    return group_call(lc, "POST", name, "join", {"member": member, "acquisition": member, **body})


def leave(lc, name, member, **named):
    return group_call(lc, "POST", name, "leave", {"member": member, **(named or {"acquisition": member})})


def members(lc, name) -> dict:
    return {m["member"]: m for m in ok(group_call(lc, "GET", name))["members"]}


def test_a_group_is_created_joined_updated_left_and_deleted_with_the_errors_tooz_maps(locks):
    name = unique("group")
    assert_error(join(locks, name, "m1"), 404, "group_not_found_exception", name)
    assert ok(group_call(locks, "PUT", name)) == {"group": name, "created": True}
    assert_error(group_call(locks, "PUT", name), 409, "group_already_exists_exception", name)
    assert name in ok(locks.call("GET", "/_groups"))["groups"]
    joined = ok(join(locks, name, "m1", capabilities={"zone": "a", "weight": 2}, lease="30s"))
    assert (joined["owner"], joined["scope"], joined["capabilities"]) == ("m1", "group", {"zone": "a", "weight": 2})
    again = ok(join(locks, name, "m1", capabilities={"zone": "a", "weight": 2}, lease="30s"))
    assert (again["fencing_token"], again["reentrant"]) == (joined["fencing_token"], True), "a retry"
    assert_error(join(locks, name, "m1", acquisition="other"), 409, "member_already_joined_exception", "m1")
    ok(join(locks, name, "m2", lease="30s"))
    seen = members(locks, name)
    assert sorted(seen) == ["m1", "m2"]
    assert (seen["m1"]["capabilities"], seen["m2"]["capabilities"]) == ({"zone": "a", "weight": 2}, None)
    assert seen["m1"]["fencing_token"] == joined["fencing_token"] and seen["m1"]["lease_ms"] > 25_000
    assert seen["m1"]["session"] is False
    updated = ok(group_call(locks, "POST", name, "update", {"member": "m2", "capabilities": ["x"]}))
    assert (updated["group"], updated["member"], updated["capabilities"]) == (name, "m2", ["x"])
    assert_error(group_call(locks, "POST", name, "update", {"member": "nobody", "capabilities": 1}),
                 404, "lock_not_held_exception", "nobody")
    beat = ok(group_call(locks, "POST", name, "heartbeat", {"member": "m1", "acquisition": "m1", "lease": "60s"}))
    assert beat["lease_ms"] == 60_000 and members(locks, name)["m1"]["lease_ms"] > 55_000
    assert_error(group_call(locks, "DELETE", name), 409, "group_not_empty_exception", name)
    ok(leave(locks, name, "m1"))
    assert_error(leave(locks, name, "m1"), 404, "lock_not_held_exception", "m1")
    ok(leave(locks, name, "m2", fencing_token=members(locks, name)["m2"]["fencing_token"]))
    assert members(locks, name) == {}
    assert ok(group_call(locks, "DELETE", name)) == {"group": name, "deleted": True}
    assert_error(group_call(locks, "GET", name), 404, "group_not_found_exception", name)
    assert_error(leave(locks, name, "m1"), 404, "group_not_found_exception", name)
    assert name not in ok(locks.call("GET", "/_groups"))["groups"]


def observe(lc, name, version, wait="20s"):
    return group_call(lc, "GET", name, "observe", version=version, wait=wait)


def observing(lc, name, version) -> dict:
    """An observe of `version` running in a thread until it is registered in the core; its answer
    goes into the dict returned."""
    out: dict = {}
    watches = ok(lc.stats())["total"]["watches"]
    threading.Thread(target=lambda: out.update(r=observe(lc, name, version)), daemon=True).start()
    wait_until(lambda: ok(lc.stats())["total"]["watches"] > watches, 10, message="observe registered")
    return out


def test_an_observer_wakes_on_a_join_an_update_and_a_member_that_leaves_with_its_lease(locks):
    name = unique("group")
    ok(group_call(locks, "PUT", name))
    empty = ok(group_call(locks, "GET", name))["version"]
    stale = ok(observe(locks, name, empty + 1))
    assert (stale["changed"], stale["version"]) == (True, empty), "a version not the group's: at once"
    quiet = ok(observe(locks, name, empty, wait="200ms"))
    assert (quiet["changed"], quiet["members"]) == (False, [])
    woken = observing(locks, name, empty)
    ok(join(locks, name, "short", lease="2s"))
    wait_until(lambda: woken, WAKE_S, message="the join woke the observer")
    after_join = ok(woken["r"])
    assert after_join["changed"] and [m["member"] for m in after_join["members"]] == ["short"]
    woken = observing(locks, name, after_join["version"])
    ok(group_call(locks, "POST", name, "update", {"member": "short", "capabilities": "v2"}))
    wait_until(lambda: woken, WAKE_S, message="the update woke the observer")
    after_update = ok(woken["r"])
    assert after_update["members"][0]["capabilities"] == "v2"
    woken = observing(locks, name, after_update["version"])
    wait_until(lambda: woken, 2 + WAKE_S, message="the lease's end woke the observer")
    assert ok(woken["r"])["members"] == [], "the member left with its lease"
    ok(group_call(locks, "DELETE", name))


def test_a_member_under_a_session_leaves_when_the_session_ends(locks):
    name = unique("group")
    ok(group_call(locks, "PUT", name))
    session = ok(locks.session_create("worker", ttl="30s"))["session"]
    ok(join(locks, name, "worker", session=session))
    assert members(locks, name)["worker"]["session"] is True, "under a session, whose id is not shown"
    ok(locks.call("DELETE", f"/_locks/_session/{session}", {"owner": "worker"}))
    assert members(locks, name) == {}
    ok(group_call(locks, "DELETE", name))


@pytest.mark.parametrize("action,body,names", [
    ("join", {}, ["member"]),
    ("join", {"member": "m", "capabilities": "x" * 1100}, ["capabilities"]),
    ("join", {"member": "m", "colour": "red"}, ["colour"]),
    ("join", {"member": "m", "lease": "forever"}, ["lease"]),
    ("leave", {"member": "m"}, ["acquisition", "fencing_token"]),
    ("heartbeat", {"member": "m"}, ["acquisition", "fencing_token"]),
    ("update", {"capabilities": 1}, ["member"]),
])
def test_bad_input_is_a_400_naming_the_field(locks, action, body, names):
    name = unique("group")
    ok(group_call(locks, "PUT", name))
    r = group_call(locks, "POST", name, action, body)
    assert r.status_code == 400, r.text
    for field in names:
        assert field in r.text, r.text
    assert members(locks, name) == {}, "nothing changed"
    assert_error(observe(locks, name, "x"), 400, "illegal_argument_exception", "version")
    assert_error(group_call(locks, "GET", name, "observe"), 400, "illegal_argument_exception", "wait")


THREE_NODES = ThreeNodes("eslm-it-groups", {"cluster.routing.rebalance.enable": "none"})


@pytest.mark.slow
def test_kill_9_of_the_owner_keeps_groups_members_capabilities_and_tokens(cluster):
    """Groups with and without members, made through one node, are read through another after
    the owner is killed -9 and its replica promoted: the same groups, members, capabilities and
    tokens; a member's heartbeat renews on the new owner, a new member's token is larger than
    every earlier one, and an observer that waited through the failover sees only that join."""
    owner, _, _ = owner_that_is_not_the_master(cluster)
    settled(owner)
    a, b = [n for n in live(cluster) if n is not owner]
    busy, empty = unique("group"), unique("group")
    for name in (busy, empty):
        assert http(a, "PUT", f"/_groups/{name}").status_code == 200
    tokens = {}
    for i in range(3):
        r = http(a, "POST", f"/_groups/{busy}/_join",
                 {"member": f"m{i}", "acquisition": f"m{i}", "capabilities": {"i": i}, "lease": "120s"})
        assert r.status_code == 200, r.text
        tokens[f"m{i}"] = r.json()["fencing_token"]
    before = http(b, "GET", f"/_groups/{busy}").json()
    observed: dict = {}
    threading.Thread(target=lambda: observed.update(r=http(
        b, "GET", f"/_groups/{busy}/_observe?version={before['version']}&wait=120s", timeout=150)),
        daemon=True).start()
    wait_until(lambda: http(owner, "GET", "/_locks/_stats/_local").json()["total"]["watches"] >= 1, 20,
               message="the observe waiting on the owner")

    owner.kill()
    try:
        after = wait_until(lambda: served(a, f"/_groups/{busy}"), 60, 0.1, message="the group served again")
        leases = [(m.pop("lease_ms"), m2.pop("lease_ms")) for m, m2 in zip(before["members"], after["members"])]
        assert after == before, f"the group changed in the failover: {before} -> {after}"
        assert all(100_000 < left <= was for was, left in leases), f"leases kept, counting down: {leases}"
        assert {busy, empty} <= set(http(b, "GET", "/_groups").json()["groups"])
        assert http(b, "GET", f"/_groups/{empty}").json()["members"] == []
        assert not observed, f"the failover woke the observer: {observed}"
        beat = http(b, "POST", f"/_groups/{busy}/_heartbeat", {"member": "m0", "acquisition": "m0", "lease": "60s"})
        assert beat.status_code == 200 and beat.json()["fencing_token"] == tokens["m0"], beat.text
        late = http(a, "POST", f"/_groups/{busy}/_join", {"member": "late", "acquisition": "late"})
        assert late.status_code == 200 and late.json()["fencing_token"] > max(tokens.values()), late.text
        wait_until(lambda: observed, 2 * WAKE_S, message="the join after the failover woke the observer")
        body = observed["r"].json()
        assert body["changed"] and sorted(m["member"] for m in body["members"]) == ["late", "m0", "m1", "m2"], body
    finally:
        rejoin(owner, a)
