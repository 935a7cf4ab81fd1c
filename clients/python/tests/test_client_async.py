"""The asyncio client against a real node: the main cases of test_client_locks.py and
test_client_sessions.py with `async with`, and `cancel_on_lost` cancelling the block's task."""

from __future__ import annotations

import asyncio
import time

import pytest
from elasticsearch import AsyncElasticsearch

import eslm
from lockclient import unique


def run(es_node, test, **settings) -> None:
    """Runs `await test(alocks, aother)`: two clients of their own owners on one
    `AsyncElasticsearch` (`settings` for the first), closed after."""
    async def main():
        es = AsyncElasticsearch(es_node.url)
        try:
            await test(eslm.AsyncLocks(es, **settings), eslm.AsyncLocks(es))
        finally:
            await es.close()
    asyncio.run(main())


async def holders(alocks, key: str) -> list[str]:
    return [h["owner"] for h in (await alocks.get(key))["holders"]]


async def until(predicate, timeout: float) -> bool:
    """Awaits until `await predicate()` is true (True) or `timeout` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not await predicate():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def test_lock_contention_and_wait_timeout(es_node):
    async def test(alocks, aother):
        key = unique()
        async with alocks.lock(key, lease="30s") as held:
            assert held.fencing_token > 0 and await holders(alocks, key) == [held.owner]
            assert await aother.try_lock(key) is None
            with pytest.raises(eslm.LockWaitTimeout):
                await aother.acquire(key, wait="300ms")
            waiter = asyncio.ensure_future(aother.acquire(key, wait="20s"))

            async def queued():
                return (await alocks.get(key))["waiters"]
            assert await until(queued, 10), "the waiter queued"
        second = await asyncio.wait_for(waiter, 20)
        assert second.fencing_token > held.fencing_token and await holders(alocks, key) == [second.owner]
        await second.release()
    run(es_node, test)


def test_the_watchdog_task_keeps_a_lock_past_its_lease(es_node):
    async def test(alocks, aother):
        key = unique()
        async with alocks.lock(key, lease="2s") as held:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                assert await aother.try_lock(key) is None, "the lock expired under a running block"
                await asyncio.sleep(0.25)
            assert not held.lost
        assert await holders(alocks, key) == []
    run(es_node, test)


def test_a_lost_lock_is_signalled_and_ends_the_block_with_lock_lost(es_node):
    async def test(alocks, aother):
        key = unique()
        called = []

        async def on_lost(held):  # a coroutine callback runs as a task
            called.append(held)

        with pytest.raises(eslm.LockLost) as lost:
            async with alocks.lock(key, lease="3s", on_lost=on_lost) as held:
                await aother.force_release(key)
                in_block = await until(lambda: asyncio.sleep(0, called), 10), held.lost
        assert in_block == (True, True), "the watchdog noticed the loss while the block ran"
        assert lost.value.held is held and called == [held]
        assert isinstance(lost.value.__cause__, eslm.LockNotHeld)
    run(es_node, test, loss_watches=0)  # the renewal finds it


def test_a_loss_watch_signals_a_force_release_within_a_second(es_node):
    """Lease 60 s: no renewal for 20 s, so only the watch task can say it at once."""
    async def test(alocks, aother):
        key = unique()

        async def watching():
            return (await alocks.es.perform_request("GET", "/_locks/_node/diagnostics")).body[
                "pending_requests"] > before
        before = (await alocks.es.perform_request("GET", "/_locks/_node/diagnostics")).body["pending_requests"]
        with pytest.raises(eslm.LockLost) as lost:
            async with alocks.lock(key, lease="60s") as held:
                registered = await until(watching, 10)
                forced_at = time.monotonic()
                await aother.force_release(key)
                in_block = await until(lambda: asyncio.sleep(0, held.lost), 5), time.monotonic() - forced_at
        assert registered, "the loss watch never reached the server"
        assert in_block[0] and in_block[1] < 1.0, f"lost signalled after {in_block[1]:.3f}s"
        assert "force_released" in str(lost.value)
        unchanged = await alocks.watch(key, held.fencing_token, wait="200ms")
        assert unchanged == {**unchanged, "changed": True, "reason": "not_held"}
    run(es_node, test)


def test_cancel_on_lost_cancels_the_block_and_leaves_the_task_usable(es_node):
    async def test(alocks, aother):
        key = unique()
        started = time.monotonic()
        with pytest.raises(eslm.LockLost) as lost:
            async with alocks.lock(key, lease="3s", cancel_on_lost=True):
                await aother.force_release(key)
                await asyncio.sleep(60)  # cancelled by the loss, within a renewal round
                pytest.fail("the block ran on after its lock was lost")
        assert time.monotonic() - started < 10
        assert isinstance(lost.value.__context__, asyncio.CancelledError)
        assert await holders(alocks, key) == []  # the task was not left cancelled
        assert asyncio.current_task().cancelling() == 0
    run(es_node, test)


def test_async_multi_lock_and_session(es_node):
    async def test(alocks, aother):
        a, b, key = unique("a"), unique("b"), unique()
        async with alocks.lock_many([a, b], wait="5s") as held:
            assert set(held.tokens) == {a, b}
            assert await aother.try_lock(b) is None
        assert await holders(alocks, a) == [] and await holders(alocks, b) == []
        async with alocks.session(ttl="2s") as session:
            held = await session.acquire(key)
            await asyncio.sleep(3)  # past the ttl: kept alive by the session's task
            assert await aother.try_lock(key) is None and not session.lost
        assert session.ended and held.released and await holders(alocks, key) == []
    run(es_node, test)
