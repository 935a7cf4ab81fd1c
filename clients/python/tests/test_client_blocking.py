"""Waiting as in redis-py and kazoo, against a real node: an acquire blocks until granted by
default, even past the server's `locks.wait.max` (the client re-sends it with the time left);
`timeout=` runs out with `LockWaitTimeout` (or False from a lock object's `acquire`);
`blocking=False` tries once; another thread's `cancel()` stops a waiting acquire at once, and a
grant the server makes after that is released by the client; cancelling an asyncio task stops
its acquire and the server drops the waiter."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import eslm
from lockclient import unique, wait_until
from test_client_async import run, until

LOWERED_WAIT_MAX = "2s"


@pytest.fixture()
def short_wait_max(es):
    """`locks.wait.max` lowered to 2 s for the test (a dynamic setting), then put back."""
    es.cluster.put_settings(persistent={"locks.wait.max": LOWERED_WAIT_MAX})
    try:
        yield 2.0
    finally:
        es.cluster.put_settings(persistent={"locks.wait.max": None})


def waiters(locks, key) -> list[str]:
    return [w["owner"] for w in locks.get(key)["waiters"]]


def test_an_acquire_blocks_past_the_servers_wait_max_until_the_holder_releases(locks, other, holders,
                                                                               short_wait_max):
    key = unique()
    held = locks.acquire(key, lease="30s")
    granted: list = []
    waiter = threading.Thread(target=lambda: granted.append(other.acquire(key)))
    started = time.monotonic()
    waiter.start()
    wait_until(lambda: waiters(locks, key), 10, message="the blocking acquire queued")
    # The hold lasts across two of the server's waits and then some: the client must re-send.
    time.sleep(max(0.0, started + 2.5 * short_wait_max - time.monotonic()))
    assert waiters(locks, key), "the acquire gave up instead of waiting on"
    assert not granted
    held.release()
    waiter.join(15)
    assert len(granted) == 1 and holders(key) == [granted[0].owner]
    assert granted[0].fencing_token > held.fencing_token
    granted[0].release()


def test_a_timeout_longer_than_the_servers_wait_max_is_kept_and_runs_out(locks, other, short_wait_max):
    key = unique()
    with locks.lock(key):
        started = time.monotonic()
        with pytest.raises(eslm.LockWaitTimeout):
            other.acquire(key, timeout=2 * short_wait_max + 1)
        took = time.monotonic() - started
        assert took >= 2 * short_wait_max + 1, f"gave up after {took:.1f} s"
        lk = other.lock(key, timeout=0.3)
        assert lk.acquire() is False
        assert lk.acquire(blocking=False) is False
        with pytest.raises(eslm.LockConflict):
            other.acquire(key, blocking=False)
        assert other.try_lock(key) is None


def test_a_lock_object_acquires_and_releases_as_redis_pys_does(locks, other, holders):
    key = unique()
    lk = locks.lock(key, lease="10s")
    assert lk.acquire() is True and lk.locked() and lk.owned()
    assert holders(key) == [lk.held.owner]
    with pytest.raises(eslm.InvalidArgument, match="already held"):
        lk.acquire()
    assert other.lock(key).acquire(timeout=0.2) is False
    lk.release()
    assert not lk.locked() and holders(key) == []
    with pytest.raises(eslm.LockNotHeld):
        lk.release()
    with pytest.raises(eslm.InvalidArgument, match=r"\[timeout\]"):
        locks.lock(key, timeout="1s", blocking=False)
    with pytest.raises(eslm.InvalidArgument, match=r"\[wait\] and \[timeout\]"):
        locks.acquire(key, timeout="1s", wait="1s")


def test_cancel_stops_a_waiting_acquire_and_a_later_grant_is_released(locks, other, holders):
    key = unique()
    held = locks.acquire(key, lease="30s")
    lk = other.lock(key)
    answers: list = []
    waiter = threading.Thread(target=lambda: answers.append(lk.acquire()))
    waiter.start()
    wait_until(lambda: waiters(locks, key), 10, message="the blocking acquire queued")
    cancelled_at = time.monotonic()
    lk.cancel()
    waiter.join(5)
    assert answers == [False] and time.monotonic() - cancelled_at < 5
    # The server still queues the abandoned request: when the holder leaves, it is granted and
    # the client releases that grant, so a third owner gets the key.
    held.release()
    third = locks.acquire(key, timeout="15s")
    assert holders(key) == [third.owner]
    third.release()
    block = other.lock(key)
    held = locks.acquire(key, lease="30s")
    entered: list = []

    def enter() -> None:
        try:
            entered.append(block.__enter__())
        except eslm.AcquireCancelled as e:
            entered.append(e)

    t = threading.Thread(target=enter)
    t.start()
    wait_until(lambda: waiters(locks, key), 10, message="the block's entry queued")
    block.cancel()
    t.join(5)
    assert len(entered) == 1 and isinstance(entered[0], eslm.AcquireCancelled)
    held.release()


def test_cancelling_an_asyncio_acquire_drops_its_waiter(es_node):
    async def test(alocks, aother):
        key = unique()

        async def queued() -> bool:
            return bool((await alocks.get(key))["waiters"])

        async with alocks.lock(key, lease="30s"):
            task = asyncio.create_task(aother.acquire(key))
            assert await until(queued, 10), "the blocking acquire did not queue"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await until(lambda: _not(queued), 10), "the server kept the cancelled waiter"
        lk = aother.lock(key)
        assert await lk.acquire(timeout="5s") is True
        await lk.release()

    run(es_node, test)


async def _not(predicate) -> bool:
    return not await predicate()
