"""Semaphores in the Python client against a real node (docs/API.md "Semaphores"): blocks that
hold permits, workers of one client each with an owner of their own never over the limit, the
watchdog renewing a grant past its lease, the limit mismatch error, an administrator's change of
the limit, and the asyncio variant."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from elasticsearch import AsyncElasticsearch

import eslm
from lockclient import unique, wait_until


def test_a_block_holds_its_permits_and_releases_them(locks):
    s = unique("sem")
    with locks.semaphore(s, limit=3, permits=2, lease="30s") as held:
        assert held.permits == 2 and held.key == s and held.fencing_token > 0
        assert held.remaining == 1, "3 - 2 left just after the grant"
        state = locks.get(s, scope="semaphore")
        assert state["limit"] == 3
        assert [(h["owner"], h["permits"]) for h in state["holders"]] == [(held.owner, 2)]
        with locks.semaphore(s, limit=3, owner=unique("worker")) as one:
            assert one.permits == 1 and one.fencing_token > held.fencing_token and one.remaining == 0
            with pytest.raises(eslm.LockConflict):
                with locks.semaphore(s, limit=3, owner=unique("worker"), blocking=False):
                    pytest.fail("a full semaphore granted a permit")
    assert held.released and locks.get(s, scope="semaphore")["holders"] == []


def test_workers_of_one_client_never_exceed_the_limit(locks):
    """8 workers of one client, each its own owner, 3 rounds each on a limit-2 semaphore."""
    s, limit = unique("sem"), 2
    held_now, most, mutex = [0], [0], threading.Lock()

    def worker(i):
        for _ in range(3):
            with locks.semaphore(s, limit=limit, owner=f"{s}-w{i}", wait="30s"):
                with mutex:
                    held_now[0] += 1
                    most[0] = max(most[0], held_now[0])
                    assert held_now[0] <= limit
                time.sleep(0.01)
                with mutex:
                    held_now[0] -= 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert most[0] == limit, "the workers did overlap, up to the limit"


def test_the_watchdog_renews_a_grant_past_its_lease(locks):
    s = unique("sem")
    with locks.semaphore(s, limit=1, lease="1s") as held:
        started = time.monotonic()
        wait_until(lambda: time.monotonic() - started > 2.5, 5)
        assert not held.lost
        assert [h["owner"] for h in locks.get(s, scope="semaphore")["holders"]] == [held.owner]


def test_limit_mismatch_and_bad_numbers(locks, other):
    s = unique("sem")
    with locks.semaphore(s, limit=4):
        with pytest.raises(eslm.SemaphoreLimitMismatch) as e:
            other.semaphore(s, limit=5).__enter__()
        assert e.value.status == 409 and e.value.limit == 4
    for bad in (dict(limit=0), dict(limit=2, permits=3), dict(limit=True)):
        with pytest.raises(eslm.InvalidArgument):
            locks.semaphore(s, **bad)


def test_an_administrator_changes_the_limit_and_nothing_held_is_revoked(locks, other):
    s = unique("sem")
    with locks.semaphore(s, limit=4, permits=3, lease="30s") as held:
        assert locks.set_semaphore_limit(s, 2) == {"key": s, "limit": 2, "previous": 4, "held": 3}
        state = locks.get(s, scope="semaphore")
        assert state["limit"] == 2 and [h["permits"] for h in state["holders"]] == [3], state
        with pytest.raises(eslm.SemaphoreLimitMismatch) as e:
            other.semaphore(s, limit=4).__enter__()
        assert e.value.limit == 2
        with pytest.raises(eslm.LockConflict):
            with other.semaphore(s, limit=2, blocking=False):
                pytest.fail("a grant over the lowered limit")
        assert not held.lost
    assert held.released
    with pytest.raises(eslm.LockNotHeld):
        locks.set_semaphore_limit(s, 3)
    for bad in (0, 70_000, True, "2"):
        with pytest.raises(eslm.InvalidArgument):
            locks.set_semaphore_limit(s, bad)


def test_async_semaphore_block(es_node):
    async def main():
        es = AsyncElasticsearch(es_node.url)
        try:
            alocks, aother = eslm.AsyncLocks(es), eslm.AsyncLocks(es)
            s = unique("sem")
            async with alocks.semaphore(s, limit=2, permits=2) as held:
                assert held.permits == 2
                assert (await alocks.set_semaphore_limit(s, 3))["previous"] == 2
                async with aother.semaphore(s, limit=3) as third:
                    assert third.remaining == 0
                assert (await alocks.set_semaphore_limit(s, 2))["held"] == 2
                with pytest.raises(eslm.LockConflict):
                    async with aother.semaphore(s, limit=2, blocking=False):
                        pytest.fail("a full semaphore granted a permit")
            async with aother.semaphore(s, limit=2, wait="5s") as next_one:
                assert next_one.fencing_token > held.fencing_token
            assert (await alocks.get(s, scope="semaphore"))["holders"] == []
        finally:
            await es.close()
    asyncio.run(main())
