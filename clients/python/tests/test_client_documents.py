"""Fenced writes and optimistic updates against a real node (docs/API.md "Fenced writes and
optimistic updates"): a holder whose lock was taken over has its write refused by Elasticsearch
itself, and concurrent optimistic increments never lose one."""

from __future__ import annotations

import asyncio
import threading

import pytest
from elasticsearch import AsyncElasticsearch

import eslm
from lockclient import unique


def source(es, index: str, doc_id: str) -> dict:
    return es.get(index=index, id=doc_id)["_source"]


def test_a_stale_holders_write_is_refused_after_a_takeover(es):
    key, index, doc_id = unique(), unique("fenced"), unique("doc")
    # No loss watch and a long lease: the first holder does not learn of the takeover, as a
    # holder frozen in a GC pause would not; only Elasticsearch's version check stands between
    # its write and the document.
    with eslm.Locks(es, loss_watches=0) as first, eslm.Locks(es) as second:
        stale = first.acquire(key, lease="60s")
        written = stale.index(index, {"by": "first", "n": 1}, id=doc_id)
        assert written["_version"] == stale.fencing_token
        first.force_release(key, reason="takeover in a test")
        with second.lock(key, lease="60s") as fresh:
            assert fresh.fencing_token > stale.fencing_token
            fresh.index(index, {"by": "second", "n": 2}, id=doc_id)
            with pytest.raises(eslm.StaleToken) as refused:
                stale.index(index, {"by": "first", "n": 3}, id=doc_id)
            assert refused.value.status == 409 and isinstance(refused.value, eslm.VersionConflict)
            assert source(es, index, doc_id) == {"by": "second", "n": 2}
            again = fresh.index(index, {"by": "second", "n": 4}, id=doc_id)
            assert again["_version"] == fresh.fencing_token, "the same holder writes again"
        assert source(es, index, doc_id) == {"by": "second", "n": 4}


def test_a_multi_lock_names_the_key_whose_token_fences_the_write(locks, es):
    a, b, index = unique(), unique(), unique("fenced")
    with locks.lock_many([a, b]) as held:
        with pytest.raises(eslm.InvalidArgument, match=r"\[key\] is required"):
            held.index(index, {"x": 1}, id="d")
        with pytest.raises(eslm.InvalidArgument, match=r"\[key\] must be one of"):
            held.index(index, {"x": 1}, id="d", key="other")
        assert held.index(index, {"x": 1}, id="d", key=b)["_version"] == held.tokens[b]


def test_concurrent_optimistic_increments_never_lose_an_update(es):
    index, doc_id = unique("counter"), "c"
    threads_n, increments = 4, 15

    def bump(doc):
        return {"n": (doc or {"n": 0})["n"] + 1}

    failures: list[BaseException] = []

    def worker():
        with eslm.Locks(es) as client:
            for _ in range(increments):
                try:
                    client.optimistic_update(index, doc_id, bump, retries=50)
                except BaseException as e:  # noqa: BLE001 - asserted below
                    failures.append(e)

    threads = [threading.Thread(target=worker) for _ in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert failures == [] and not any(t.is_alive() for t in threads)
    assert source(es, index, doc_id) == {"n": threads_n * increments}


def test_an_update_that_changes_nothing_writes_nothing_and_a_lost_race_gives_up_typed(locks, es):
    index, doc_id = unique("opt"), "d"
    assert locks.optimistic_update(index, doc_id, lambda doc: None) is None, "nothing created"
    assert locks.optimistic_update(index, doc_id, lambda doc: {"v": 1}) == {"v": 1}
    version = es.get(index=index, id=doc_id)["_version"]
    assert locks.optimistic_update(index, doc_id, lambda doc: doc) == {"v": 1}
    assert es.get(index=index, id=doc_id)["_version"] == version, "unchanged: not written"

    def racing(doc):
        # Another writer gets in between this read and its write, every time.
        es.index(index=index, id=doc_id, document={"v": doc["v"] + 100})
        return {"v": doc["v"] + 1}

    with pytest.raises(eslm.UpdateConflict) as gave_up:
        locks.optimistic_update(index, doc_id, racing, retries=2)
    assert gave_up.value.status == 409
    assert source(es, index, doc_id) == {"v": 301}, "three reads, three racing writes, none of ours"
    with pytest.raises(eslm.InvalidArgument):
        locks.optimistic_update(index, doc_id, racing, retries=-1)


def test_the_async_client_fences_and_updates_alike(es_node):
    async def main():
        es = AsyncElasticsearch(es_node.url)
        try:
            alocks = eslm.AsyncLocks(es)
            key, index = unique(), unique("fenced")
            async with alocks.lock(key) as held:
                written = await held.index(index, {"n": 1}, id="d")
                assert written["_version"] == held.fencing_token
                # A later holder's write (its token is larger), then this holder's again: refused.
                await es.index(index=index, id="d", document={"n": 1}, version=held.fencing_token + 1,
                               version_type="external_gte")
                with pytest.raises(eslm.StaleToken):
                    await held.index(index, {"n": 0}, id="d")
            assert await alocks.optimistic_update(index, "d", lambda d: {"n": d["n"] + 1}) == {"n": 2}
            await alocks.close()
        finally:
            await es.close()

    asyncio.run(main())
