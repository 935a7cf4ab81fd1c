"""Groups in the Python client against a real node (docs/API.md "Groups"): create, list, join
with capabilities, read, update, heartbeat, leave and delete, each error as its own class; an
observer woken by a join and by a member whose lease ran out; the same calls awaited on
`AsyncLocks`; and bad arguments refused before anything is sent."""

from __future__ import annotations

import threading

import pytest

import eslm
from lockclient import unique, wait_until
from test_client_async import run
from test_client_elections import watches


def test_a_group_lives_from_creation_to_deletion_with_the_errors_of_its_own(locks):
    name = unique("group")
    with pytest.raises(eslm.GroupNotFound):
        locks.join_group(name, "m1")
    assert locks.create_group(name) == {"group": name, "created": True}
    with pytest.raises(eslm.GroupAlreadyExists):
        locks.create_group(name)
    assert name in locks.groups()["groups"]
    joined = locks.join_group(name, "m1", capabilities={"zone": "a"}, lease="30s")
    assert (joined["owner"], joined["capabilities"]) == ("m1", {"zone": "a"})
    assert locks.join_group(name, "m1", capabilities={"zone": "a"})["reentrant"], "a retry of the same acquisition"
    with pytest.raises(eslm.MemberAlreadyJoined):
        locks.join_group(name, "m1", acquisition="another")
    locks.join_group(name, "m2")
    assert [m["member"] for m in locks.group(name)["members"]] == ["m1", "m2"]
    assert locks.update_member(name, "m2", [1, 2])["capabilities"] == [1, 2]
    assert locks.heartbeat_group(name, "m1", lease="60s")["lease_ms"] == 60_000
    with pytest.raises(eslm.GroupNotEmpty):
        locks.delete_group(name)
    locks.leave_group(name, "m1")
    with pytest.raises(eslm.LockNotHeld):
        locks.leave_group(name, "m1")
    locks.leave_group(name, "m2")
    assert locks.delete_group(name)["deleted"]
    with pytest.raises(eslm.GroupNotFound):
        locks.group(name)


def test_an_observer_wakes_on_a_join_and_when_a_member_lease_ends(locks):
    name = unique("group")
    locks.create_group(name)
    version = locks.group(name)["version"]
    seen: dict = {}
    watching = threading.Thread(target=lambda: seen.update(locks.observe_group(name, version, "20s")))
    watching.start()
    wait_until(lambda: watches(locks) >= 1, 10, message="observe registered")
    locks.join_group(name, "short", lease="2s")
    watching.join(10)
    assert seen["changed"] and [m["member"] for m in seen["members"]] == ["short"]
    gone = locks.observe_group(name, seen["version"], "10s")
    assert gone["changed"] and gone["members"] == [], "the member left with its lease"
    quiet = locks.observe_group(name, gone["version"], "100ms")
    assert quiet["changed"] is False
    locks.delete_group(name)


def test_the_group_calls_are_awaited_on_the_asyncio_client(es_node):
    async def test(alocks, aother):
        name = unique("group")
        await alocks.create_group(name)
        await alocks.join_group(name, "a", capabilities="x")
        assert (await aother.group(name))["members"][0]["capabilities"] == "x"
        observed = await aother.observe_group(name, 0, "5s")
        assert observed["changed"] and observed["version"] > 0
        await alocks.leave_group(name, "a")
        await alocks.delete_group(name)
    run(es_node, test)


@pytest.mark.parametrize("call", [
    lambda locks: locks.create_group(""),
    lambda locks: locks.join_group("g", ""),
    lambda locks: locks.join_group("g", "m", lease="soon"),
    lambda locks: locks.observe_group("g", -1),
    lambda locks: locks.observe_group("g", 0, wait="never"),
])
def test_bad_arguments_are_refused_before_anything_is_sent(locks, call):
    with pytest.raises(eslm.InvalidArgument):
        call(locks)
