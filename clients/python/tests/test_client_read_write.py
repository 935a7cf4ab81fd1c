"""Read-write locks (issue 49 item 5): `read_lock` and `write_lock` are `lock(key, mode=...)`,
readers share the key, a writer excludes readers and writers, and `held.downgrade()` turns a
write lock into a read lock in one step (`POST /_locks/{key}/_downgrade`): a reader queued
before the downgrade gets in at once, a writer queued behind it goes on waiting, and the token
and the lease stay. Sync and asyncio, against a real node (conftest.py)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from elasticsearch import AsyncElasticsearch

import eslm
from lockclient import unique

WAIT_S = 30


def modes(locks, key):
    """(owner, mode, token) of each holder of `key`, and (owner, mode) of each waiter, in order."""
    state = locks.get(key)
    return ([(h["owner"], h["mode"], h["fencing_token"]) for h in state["holders"]],
            [(w["owner"], w["mode"]) for w in state["waiters"]])


def test_readers_share_the_key_and_a_writer_excludes_everyone(locks, other):
    key = unique("rw")
    with locks.read_lock(key) as first, other.read_lock(key, lease="20s") as second:
        assert (first.mode, second.mode) == ("shared", "shared")
        assert first.fencing_token != second.fencing_token
        assert sorted(modes(locks, key)[0]) == sorted([(first.owner, "shared", first.fencing_token),
                                                       (second.owner, "shared", second.fencing_token)])
        assert not other.write_lock(key, blocking=False).acquire(), "a writer got in beside readers"
    with locks.write_lock(key) as writer:
        assert writer.mode == "exclusive"
        assert not other.read_lock(key, blocking=False).acquire(), "a reader got in beside the writer"
        assert not other.write_lock(key, timeout="200ms").acquire(), "two writers at once"
        assert other.try_lock(key, mode="shared") is None
    with pytest.raises(eslm.InvalidArgument, match="mode"):
        locks.read_lock(key, mode="exclusive")  # type: ignore[call-arg]


def test_a_downgrade_lets_a_queued_reader_in_and_keeps_a_queued_writer_waiting(locks, other, es, noticed):
    key = unique("rw-downgrade")
    third = eslm.Locks(es)
    reader_in, reader_out, writer_in = threading.Event(), threading.Event(), threading.Event()
    reader = other.read_lock(key, timeout="60s")
    writer = third.write_lock(key, timeout="60s")

    def read():
        with reader:
            reader_in.set()
            reader_out.wait(WAIT_S)

    def write():
        with writer:
            writer_in.set()

    threads = [threading.Thread(target=read), threading.Thread(target=write)]
    try:
        with locks.write_lock(key, lease="60s") as held:
            token = held.fencing_token
            threads[0].start()
            assert noticed(lambda: len(modes(locks, key)[1]) == 1, WAIT_S), "the reader never queued"
            threads[1].start()
            assert noticed(lambda: len(modes(locks, key)[1]) == 2, WAIT_S), "the writer never queued"
            lease_before = locks.get(key)["holders"][0]["lease_ms"]

            held.downgrade()

            assert reader_in.wait(WAIT_S), "the queued reader was not let in"
            holding, waiting = modes(locks, key)
            assert (held.owner, "shared", token) in holding and len(holding) == 2
            assert [mode for _, mode in waiting] == ["exclusive"] and not writer_in.is_set()
            assert held.fencing_token == token and held.mode == "shared"
            mine = next(h for h in locks.get(key)["holders"] if h["owner"] == held.owner)
            assert mine["lease_ms"] <= lease_before, "the downgrade started a new lease"
            with pytest.raises(eslm.InvalidArgument, match="only an exclusive lock"):
                held.downgrade()
        assert not writer_in.is_set(), "the writer got in beside the reader"
        reader_out.set()
        assert writer_in.wait(WAIT_S), "the writer never got the key"
    finally:
        reader_out.set()
        for t in threads:
            t.join(WAIT_S)
        third.close()


def test_a_downgrade_of_a_lost_lock_raises_lock_lost(locks, other, noticed):
    key = unique("rw-lost")
    held = locks.acquire(key, mode="exclusive")
    other.force_release(key)
    with pytest.raises(eslm.LockLost):
        held.downgrade()
    assert held.lost
    with pytest.raises(eslm.LockLost):
        held.release()


def test_asyncio_read_write_locks_and_downgrade(es_node):
    async def main():
        key = unique("rw-async")
        es = AsyncElasticsearch(es_node.url)
        try:
            async with eslm.AsyncLocks(es) as alocks, eslm.AsyncLocks(es) as others:
                async with alocks.read_lock(key) as a, others.read_lock(key) as b:
                    assert (a.mode, b.mode) == ("shared", "shared")
                    assert await others.try_lock(key) is None
                async with alocks.write_lock(key, lease="30s") as held:
                    token = held.fencing_token
                    reading = asyncio.ensure_future(others.acquire(key, mode="shared", timeout="30s"))
                    deadline = time.monotonic() + WAIT_S
                    while not (await alocks.get(key))["waiters"]:
                        assert time.monotonic() < deadline, "the reader never queued"
                        await asyncio.sleep(0.02)
                    await held.downgrade()
                    reader = await asyncio.wait_for(reading, WAIT_S)
                    assert (held.mode, held.fencing_token, reader.mode) == ("shared", token, "shared")
                    await reader.release()
        finally:
            await es.close()
    asyncio.run(main())
