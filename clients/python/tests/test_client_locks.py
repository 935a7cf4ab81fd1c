"""The sync client against a real node: lock and release, contention between two owners, waits
and their timeout, the watchdog, a lost lock and its signal, fencing, multi-locks, tree and
shared locks, reentrancy, and the typed errors (docs/API.md "Errors")."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from elasticsearch import ConflictError

import eslm
from eslm import steps
from lockclient import unique, wait_until


def test_lock_is_held_in_its_block_and_released_after(locks, holders):
    key = unique()
    with locks.lock(key, lease="30s") as held:
        assert holders(key) == [held.owner]
        assert held.key == key and held.owner.startswith(locks.identity)
        assert held.fencing_token > 0 and held.lease_ms == 30_000
        assert not held.lost
    assert held.released and holders(key) == []


def test_two_owners_contend(locks, other, holders):
    key = unique()
    with locks.lock(key) as held:
        assert other.try_lock(key) is None
        with pytest.raises(eslm.LockConflict) as busy:
            with other.lock(key, blocking=False):
                pytest.fail("a busy key was granted")
        assert busy.value.status == 409 and busy.value.type == "lock_conflict_exception"
        assert busy.value.holders == [held.owner]
    second = other.try_lock(key)
    assert second is not None and second.fencing_token > held.fencing_token
    second.release()
    assert holders(key) == []


def test_a_wait_runs_out_with_a_typed_error(locks, other):
    key = unique()
    with locks.lock(key):
        started = time.monotonic()
        with pytest.raises(eslm.LockWaitTimeout) as timeout:
            other.acquire(key, wait="400ms")
        assert time.monotonic() - started >= 0.4
        assert timeout.value.status == 409 and timeout.value.type == "lock_wait_timeout_exception"


def test_a_waiter_is_granted_when_the_holder_leaves(locks, other, holders):
    key = unique()
    granted = []
    with locks.lock(key):
        waiter = threading.Thread(target=lambda: granted.append(other.acquire(key, wait="20s")))
        waiter.start()
        wait_until(lambda: locks.get(key)["waiters"], 10, message="the waiter queued")
    waiter.join(20)
    assert len(granted) == 1 and holders(key) == [granted[0].owner]
    granted[0].release()


def test_the_watchdog_keeps_a_lock_past_its_lease(locks, other, holders):
    """Lease 2 s, block 5 s: renewed every 2/3 s, so the other owner never gets it."""
    key = unique()
    with locks.lock(key, lease="2s") as held:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            assert other.try_lock(key) is None, "the lock expired under a running block"
            time.sleep(0.25)
        assert not held.lost
    assert holders(key) == []


def test_without_a_watchdog_a_lease_runs_out_unless_renewed(locks, other, holders):
    """`watchdog=False`: nothing renews the grant, so its lease ends it; a renewal by hand keeps it."""
    key = unique()
    held = locks.acquire(key, lease="1s", watchdog=False)
    held.renew(lease="1s")
    assert holders(key) == [held.owner], "renewed by hand"
    wait_until(lambda: holders(key) == [], 10, interval=0.05, message="the lease to run out")
    taken = other.try_lock(key)
    assert taken is not None and taken.fencing_token > held.fencing_token
    with pytest.raises(eslm.LockNotHeld):
        held.renew()
    taken.release()
    with pytest.raises(eslm.InvalidArgument, match=r"\[watchdog\]"):
        locks.acquire(key, watchdog="no")


def test_a_force_released_lock_is_signalled_and_the_block_ends_with_lock_lost(es, other, noticed):
    """A block whose lock is lost ends with LockLost whatever it raised, so what happens inside
    is recorded there and asserted after it. Without loss watches, the renewal finds it."""
    locks = eslm.Locks(es, loss_watches=0)
    key = unique()
    called = []
    with pytest.raises(eslm.LockLost) as lost:
        with locks.lock(key, lease="3s", on_lost=called.append) as held:
            other.force_release(key, reason="test: taken from outside")
            in_block = noticed(lambda: held.lost, 10), list(called)
            taken = other.try_lock(key)  # free for others meanwhile
    assert in_block == (True, [held]), "the watchdog noticed the loss while the block ran"
    assert taken is not None
    assert lost.value.held is held and held.lost_error is lost.value
    assert isinstance(lost.value.__cause__, eslm.LockNotHeld)
    assert called == [held], "on_lost is called once"


def test_a_release_that_finds_the_lock_gone_is_a_loss(es, other):
    """No watchdog round in between (lease 30 s, no loss watch): the release itself says it was
    not held."""
    locks = eslm.Locks(es, loss_watches=0)
    key = unique()
    called = []
    with pytest.raises(eslm.LockLost):
        with locks.lock(key, lease="30s", on_lost=called.append) as held:
            other.force_release(key)
    assert held.lost and called == [held]


def test_a_loss_watch_signals_a_force_release_within_a_second(locks, other, noticed):
    """Lease 60 s: the first renewal would come after 20 s, so only the watch can say it at
    once, with the server's reason."""
    key = unique()
    called = []
    before = pending(locks)
    with pytest.raises(eslm.LockLost) as lost:
        with locks.lock(key, lease="60s", on_lost=called.append) as held:
            watching = noticed(lambda: pending(locks) > before, 10)
            forced_at = time.monotonic()
            other.force_release(key, reason="test: taken from outside")
            in_block = noticed(lambda: held.lost, 5), time.monotonic() - forced_at
    assert watching, "the loss watch never reached the server"
    assert in_block[0] and in_block[1] < 1.0, f"lost signalled after {in_block[1]:.3f}s"
    assert called == [held] and lost.value.held is held
    assert "force_released" in str(lost.value), lost.value


def pending(locks) -> int:
    """The requests the node has waiting without a thread (queued acquires and watches)."""
    return locks.es.perform_request("GET", "/_locks/_node/diagnostics").body["pending_requests"]


def test_watch_answers_the_reason_or_unchanged(locks, other):
    key = unique()
    held = other.acquire(key, lease="60s")
    started = time.monotonic()
    unchanged = locks.watch(key, held.fencing_token, wait="300ms")
    assert time.monotonic() - started >= 0.3
    assert unchanged["changed"] is False and unchanged["held"] is True, unchanged
    held.release()
    gone = locks.watch(key, held.fencing_token, wait="10s")
    assert gone["changed"] is True and gone["reason"] == "not_held", gone
    with pytest.raises(eslm.InvalidArgument, match=r"\[token\]"):
        locks.watch(key, 0)
    with pytest.raises(eslm.IllegalArgument, match=r"locks.wait.max"):
        locks.watch(key, 5, wait="2h")


def test_a_stale_holders_fenced_write_is_refused(es, locks, other):
    """docs/API.md "The fencing recipe": the token as an external version (external_gte)."""
    index, key = unique("fenced"), unique()
    with pytest.raises(eslm.LockLost):
        with locks.lock(key, lease="30s") as stale:
            es.index(index=index, id="42", document={"by": "first"}, version=stale.fencing_token,
                     version_type="external_gte", refresh=True)
            other.force_release(key)
            with other.lock(key) as fresh:
                es.index(index=index, id="42", document={"by": "second"}, version=fresh.fencing_token,
                         version_type="external_gte")
            with pytest.raises(ConflictError) as refused:
                es.index(index=index, id="42", document={"by": "stale"}, version=stale.fencing_token,
                         version_type="external_gte")
    assert fresh.fencing_token > stale.fencing_token
    assert refused.value.meta.status == 409
    assert refused.value.body["error"]["type"] == "version_conflict_engine_exception"
    assert es.get(index=index, id="42")["_source"] == {"by": "second"}


def test_a_lock_delay_keeps_a_force_released_key_from_others_but_not_its_owner(locks, other):
    """docs/API.md "Lock-delay": the holder may be paused rather than gone, so its key waits."""
    key = unique()
    held = locks.acquire(key, lease="30s", lock_delay="20s")
    other.force_release(key)
    assert [d["owner"] for d in locks.get(key)["lock_delays"]] == [held.owner]
    with pytest.raises(eslm.LockConflict) as refused:
        other.acquire(key, blocking=False)
    assert 0 < int(refused.value.error["retry_after_ms"]) <= 20_000
    assert other.try_lock(key) is None
    back = locks.acquire(key, owner=held.owner)
    assert back.fencing_token > held.fencing_token
    back.release()
    with pytest.raises(eslm.InvalidArgument, match=r"\[lock_delay\]"):
        locks.semaphore(unique("sem"), limit=2, lock_delay="1s")


def test_multi_lock_is_all_or_nothing(locks, other, holders):
    a, b, c = unique("a"), unique("b"), unique("c")
    with locks.lock_many([a, {"key": b, "mode": "shared"}], wait="5s") as held:
        assert set(held.tokens) == {a, b} and held.fencing_token == max(held.tokens.values())
        assert holders(a) == [held.owner] and holders(b) == [held.owner]
        with pytest.raises(eslm.LockConflict):
            with other.lock_many([c, a], blocking=False):
                pytest.fail("a multi-lock over a held key was granted")
        assert holders(c) == [], "a refused multi-lock holds none of its keys"
        shared = other.try_lock(b, mode="shared")
        assert shared is not None
        shared.release()
    assert holders(a) == [] and holders(b) == []


def test_shared_and_tree_locks(locks, other, holders):
    key, root = unique(), "/" + unique("t")
    with locks.lock(key, mode="shared") as one, other.lock(key, mode="shared") as two:
        assert sorted(holders(key)) == sorted([one.owner, two.owner])
    with locks.lock(f"{root}/eu/42", scope="tree", priority="background"):
        assert other.try_lock(root, scope="tree") is None  # the ancestor holds an intention
        sibling = other.try_lock(f"{root}/us", scope="tree")
        assert sibling is not None
        sibling.release()


def test_a_nested_reentrant_block_does_not_release_the_outer_one(locks, holders):
    """Reentrancy asked for (`reentrant=True`: the thread's owner): the inner block gets the
    outer's grant and leaves it held."""
    key = unique()
    with locks.lock(key, reentrant=True) as outer:
        with locks.lock(key, reentrant=True) as inner:
            assert inner.nested and inner.fencing_token == outer.fencing_token
            assert inner.owner == outer.owner
        assert holders(key) == [outer.owner] and not outer.released
    assert holders(key) == []


def test_a_nested_block_without_reentrant_is_another_owner(locks):
    """The default is an owner per acquisition: the same thread asking again is refused, as
    another thread would be (no silent reentrancy)."""
    key = unique()
    with locks.lock(key) as outer:
        assert locks.try_lock(key) is None
        with pytest.raises(eslm.LockConflict) as busy:
            locks.acquire(key, blocking=False)
        assert busy.value.holders == [outer.owner]


def test_durations_take_strings_seconds_and_timedeltas(locks):
    for lease, ms in (("1500ms", 1500), (2.5, 2500), (7, 7000), (timedelta(minutes=1), 60_000)):
        with locks.lock(unique(), lease=lease) as held:
            assert held.lease_ms == ms


@pytest.mark.parametrize("options, named", [
    ({"lease": "5 parsecs"}, "lease"), ({"lease": -1}, "lease"), ({"wait": True}, "wait"),
    ({"wait": float("nan")}, "wait"), ({"lease": [30]}, "lease"), ({"mode": "sole"}, "mode"),
    ({"scope": "forest"}, "scope"), ({"priority": 10}, "priority"), ({"on_lost": "print"}, "on_lost"),
    ({"cancel_on_lost": True}, "cancel_on_lost"), ({"owner": ""}, "owner"), ({"reentrant": "yes"}, "reentrant"),
    ({"owner": "w", "reentrant": True}, "owner"), ({"lock_delay": "soon"}, "lock_delay"),
])
def test_bad_options_are_refused_before_anything_is_sent(locks, options, named, holders):
    key = unique()
    with pytest.raises(eslm.InvalidArgument, match=rf"\[{named}\]"):
        locks.lock(key, **options)
    assert holders(key) == []


def test_bad_client_settings_are_refused(es):
    for kwargs, named in (({"owner": ""}, "owner"), ({"retry_for": "soon"}, "retry_for"),
                          ({"renew_fraction": 1.5}, "renew_fraction"),
                          ({"loss_watches": -1}, "loss_watches")):
        with pytest.raises(eslm.InvalidArgument, match=rf"\[{named}\]"):
            eslm.Locks(es, **kwargs)
    with pytest.raises(eslm.InvalidArgument, match=r"\[es\]"):
        eslm.Locks("http://127.0.0.1:9200")


def test_server_errors_arrive_as_their_types(locks, other):
    with pytest.raises(eslm.IllegalArgument) as bad:
        locks.acquire(unique(), lease="11m")  # over locks.lease.max (10m)
    assert bad.value.status == 400 and "lease" in bad.value.reason
    with pytest.raises(eslm.IllegalArgument):
        locks.acquire("control\x01char")
    with pytest.raises(eslm.LockNotHeld) as free:
        other.force_release(unique())
    assert free.value.status == 404 and free.value.type == "lock_not_held_exception"
    held = locks.acquire(unique(), lease="30s")
    other.force_release(held.key)
    with pytest.raises(eslm.LockNotHeld):
        held.renew()
    assert held.lost, "a renewal by hand that finds the lock gone is a loss too"
    with pytest.raises(eslm.LockLost):
        held.release()


def test_error_answers_the_client_never_provokes_map_to_their_classes(es, locks):
    """Bodies eslm itself never sends, sent raw through the same client and read by eslm; and a
    limit reached (set for the test, reset after)."""
    path = f"/_locks/{unique()}/_acquire"
    cases = [('{"owner": 17}', eslm.RequestParseError, 400), ('{"owner": "a"', eslm.RequestEOFError, 400),
             ("{" + " " * 500_000 + "}", eslm.RequestTooLarge, 413)]
    for body, cls, status in cases:
        with pytest.raises(cls) as refused:
            locks.run(steps.simple("POST", path, body, 0))
        assert (refused.value.status, refused.value.type) == (status, cls.error_type)
    es.cluster.put_settings(persistent={"locks.limits.max_locks_per_owner": 1})
    worker = locks.with_owner(unique("worker"))  # one owner for both acquires
    try:
        with worker.lock(unique()):
            with pytest.raises(eslm.LimitExceeded) as limit:
                worker.acquire(unique())
    finally:
        es.cluster.put_settings(persistent={"locks.limits.max_locks_per_owner": None})
    assert limit.value.status == 429 and limit.value.limit == "locks.limits.max_locks_per_owner"


def test_a_deadlock_victim_gets_a_deadlock_error(locks, other):
    """Each holds one key and waits for the other's: the younger waiter is the victim
    (docs/API.md: lowest priority, then youngest); the older one is granted after."""
    k1, k2 = unique(), unique()
    outcomes = []
    # A deadlock is between owners: each worker holds and waits under one owner of its own.
    a, b = locks.with_owner(unique("a")), other.with_owner(unique("b"))

    def first_waiter():
        with a.lock(k2, wait="20s"):
            outcomes.append("granted")

    with a.lock(k1), b.lock(k2):
        first = threading.Thread(target=first_waiter)
        first.start()
        wait_until(lambda: locks.get(k2)["waiters"], 10, message="the first waiter queued")
        with pytest.raises(eslm.Deadlock) as victim:
            b.acquire(k1, wait="10s")
        assert victim.value.status == 409 and victim.value.type == "deadlock_exception"
    first.join(20)
    assert outcomes == ["granted"]


def test_preemption_calls_on_revoke_and_the_holder_that_ignores_it_loses_the_lock(locks, other):
    """docs/API.md "Preemption": a background holder is told (on_revoke with the grace), keeps
    renewing through the grace, and loses the lock (LockLost, reason preempted) when it ends;
    the foreground waiter is granted with a larger token."""
    key, told = unique(), []
    held = locks.acquire(key, priority="background", lease="2s",
                         on_revoke=lambda h, grace: told.append((h, grace)))
    granted = other.acquire(key, wait="20s", preempt="3s")
    assert [h for h, _ in told] == [held] and 0 < told[0][1] <= 3 and held.revoke_grace_s == told[0][1]
    assert granted.fencing_token > held.fencing_token
    wait_until(lambda: held.lost, 10, message="the preempted holder finds its loss")
    assert "preempted" in str(held.lost_error)
    granted.release()
    with pytest.raises(eslm.InvalidArgument, match=r"\[preempt\]"):
        locks.semaphore(unique("sem"), limit=2, preempt="1s")
