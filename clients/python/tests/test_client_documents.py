"""Fenced writes, fenced changes and optimistic updates against a real node (docs/API.md
"Fenced writes and optimistic updates", "Fenced changes"): a holder whose lock was taken over has
its write refused by Elasticsearch itself, whatever the interleaving of its read and write with
the next holder's; concurrent optimistic increments never lose one."""

from __future__ import annotations

import asyncio
import threading

import pytest
from elasticsearch import AsyncElasticsearch, NotFoundError

import eslm
from eslm import ops
from lockclient import unique, wait_until


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
    # The index first: four first writes at once would race its creation (a read that reaches it
    # before its shard started is answered 503 no_shard_available), which is not what this tests.
    es.indices.create(index=index)
    es.cluster.health(index=index, wait_for_status="yellow", timeout="30s")

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


# --- fenced changes (docs/API.md "Fenced changes") ---------------------------------------------

FENCE = "eslm_fence"


def stored(es, index: str, doc_id: str) -> dict | None:
    """The document as Elasticsearch holds it, fence and all (None when there is none)."""
    try:
        return es.get(index=index, id=doc_id)["_source"]
    except NotFoundError:
        return None


class StalledRenewals:
    """An `Elasticsearch` whose lock renewals hang until `resume()`, as a holder frozen in a GC
    pause or cut off from the cluster finds them: its lease runs out on the server while it still
    believes it holds the lock (with `loss_watches=0` nothing tells it). Every other request goes
    through."""

    def __init__(self, es, resumed: threading.Event | None = None):
        self.es = es
        self.resumed = resumed or threading.Event()

    def options(self, **kwargs):
        return type(self)(self.es.options(**kwargs), self.resumed)

    def perform_request(self, method, path, **kwargs):
        if path.endswith("/_renew"):
            self.resumed.wait(120)
        return self.es.perform_request(method, path, **kwargs)

    def resume(self) -> None:
        self.resumed.set()


class AsyncStalledRenewals(StalledRenewals):
    """`StalledRenewals` of an `AsyncElasticsearch`: the renewal waits in a thread, the loop runs on."""

    async def perform_request(self, method, path, **kwargs):
        if path.endswith("/_renew"):
            await asyncio.to_thread(self.resumed.wait, 120)
        return await self.es.perform_request(method, path, **kwargs)


class Recording:
    """An `Elasticsearch` that records the path of every request sent through it."""

    def __init__(self, es, paths: list | None = None):
        self.es = es
        self.paths: list[str] = [] if paths is None else paths

    def options(self, **kwargs):
        return Recording(self.es.options(**kwargs), self.paths)

    def perform_request(self, method, path, **kwargs):
        self.paths.append(path)
        return self.es.perform_request(method, path, **kwargs)


def lease_ran_out(locks, key: str) -> None:
    """Waits until the server shows `key` free: the paused holder's lease ran out."""
    wait_until(lambda: not locks.get(key)["holders"], 30, interval=0.05, message=f"the lease of [{key}] to run out")


def test_a_fenced_change_merges_runs_field_operations_and_read_modify_writes(locks, es):
    index, key = unique("fc"), unique()
    with locks.lock(key) as held:
        token = held.fencing_token
        assert held.read(index, "d") is None, "missing: the fenced read leaves a tombstone"
        assert stored(es, index, "d") == {FENCE: {"token": token, "key": key, "deleted": True}}
        assert held.update(index, "d", {"status": "new", "meta": {"a": 1}}) == {"status": "new", "meta": {"a": 1}}
        assert held.update(index, "d", {"meta": {"b": 2}}) == {"status": "new", "meta": {"a": 1, "b": 2}}
        now = held.update(index, "d", [ops.inc("n"), ops.inc("n", by=2), ops.append("log", "x"),
                                       ops.set("meta.by", "w1"), ops.remove("status")])
        assert now == {"meta": {"a": 1, "b": 2, "by": "w1"}, "n": 3, "log": ["x"]}

        seen = []

        def tenfold(doc):
            seen.append(doc)
            return {**doc, "n": doc["n"] * 10}

        assert held.update(index, "d", tenfold) == {**now, "n": 30}
        assert seen == [now], "the function got the source as the fenced read returned it, without the fence"
        version = es.get(index=index, id="d")["_version"]
        assert held.update(index, "d", lambda doc: None) == {**now, "n": 30}
        assert held.update(index, "d", lambda doc: doc) == {**now, "n": 30}
        assert es.get(index=index, id="d")["_version"] == version, "nothing to write: nothing written"
        with pytest.raises(eslm.IllegalArgument) as refused:
            held.update(index, "d", [ops.inc("n"), ops.inc("log")])   # a list is not a number
        assert refused.value.status == 400 and "[inc] needs a number" in str(refused.value)
        assert held.read(index, "d") == {**now, "n": 30}, "a refused change writes none of its operations"
        assert stored(es, index, "d")[FENCE] == {"token": token, "key": key}


def test_a_fenced_delete_leaves_a_tombstone_and_a_change_re_creates_the_document(locks, es):
    index, key = unique("fc"), unique()
    with locks.lock(key) as held:
        held.update(index, "d", {"v": 1, "w": 2})
        assert held.delete(index, "d", refresh=True) is None
        assert stored(es, index, "d") == {FENCE: {"token": held.fencing_token, "key": key, "deleted": True}}
        assert held.read(index, "d") is None
        visible = es.search(index=index, query={"bool": {"must_not": {"term": {f"{FENCE}.deleted": True}}}})
        assert visible["hits"]["total"]["value"] == 0, "the tombstone filtered out as docs/API.md says"
        assert held.update(index, "d", lambda doc: {"seen": doc}) == {"seen": None}, "a tombstone reads as none"
        held.delete(index, "d")
        assert held.update(index, "d", [ops.inc("v")]) == {"v": 1}, "re-created from an empty document"


def test_a_stale_holders_changes_are_refused_whatever_the_interleaving(locks, es):
    key, index = unique(), unique("fc")
    stalled = StalledRenewals(es)
    with eslm.Locks(stalled, loss_watches=0) as first:
        try:
            old = first.acquire(key, lease="1s")
            assert old.update(index, "n", {"n": 1}) == {"n": 1}
            old.update(index, "gone", {"v": "old"})
            taken = []

            def paused(doc):
                # Between the first holder's read and its write: its lease runs out, and the next
                # holder takes the lock and counts. The plain recipe would accept the write below.
                lease_ran_out(locks, key)
                taken.append(locks.acquire(key, lease="30s"))
                assert taken[0].update(index, "n", [ops.inc("n")]) == {"n": 2}
                return {"n": doc["n"] + 1}

            with pytest.raises(eslm.StaleToken) as refused:
                old.update(index, "n", paused)
            new = taken[0]
            assert new.fencing_token > old.fencing_token and not old.lost, "nothing told the first holder"
            stale = refused.value
            assert (stale.fence, stale.token, stale.status, stale.type) == (
                new.fencing_token, old.fencing_token, None, "stale_token")
            assert f"fence is token [{new.fencing_token}]" in str(stale)
            assert f"this lock's token is [{old.fencing_token}]" in str(stale)
            assert isinstance(stale, eslm.VersionConflict)
            assert new.read(index, "n") == {"n": 2}, "the next holder's increment kept, the stale write refused"

            new.delete(index, "gone")
            for stale_call in (lambda: old.update(index, "n", [ops.inc("n")]),
                               lambda: old.update(index, "n", {"n": 0}),
                               lambda: old.read(index, "n"),
                               lambda: old.delete(index, "n"),
                               lambda: old.update(index, "gone", {"v": "stale"})):
                with pytest.raises(eslm.StaleToken):
                    stale_call()
            assert stored(es, index, "n") == {"n": 2, FENCE: {"token": new.fencing_token, "key": key}}
            assert stored(es, index, "gone") == {FENCE: {"token": new.fencing_token, "key": key, "deleted": True}}

            results = old.bulk([(index, "n", [ops.inc("n")]), (index, "fresh", {"v": 1}), (index, "gone", ops.DELETE)],
                               refresh=True)
            assert [(r.index, r.id, r.outcome) for r in results] == [
                (index, "n", "stale"), (index, "fresh", "applied"), (index, "gone", "stale")]
            assert results[0].fence == new.fencing_token and isinstance(results[0].error, eslm.StaleToken)
            assert results[0].source is None and results[0].stale and not results[0].applied
            assert (results[1].source, results[1].fence, results[1].error) == ({"v": 1}, old.fencing_token, None)

            results = new.bulk([(index, "n", [ops.inc("n")]), (index, "fresh", [ops.append("v", 2)]),
                                (index, "gone", {"v": "again"}), (index, "n", ops.DELETE)])
            assert [r.outcome for r in results] == ["applied", "failed", "applied", "applied"]
            assert results[0].source == {"n": 3} and results[2].source == {"v": "again"}
            assert isinstance(results[1].error, eslm.IllegalArgument) and results[1].error.status == 400
            assert results[1].failed and results[1].source is None
            assert results[3].source is None and stored(es, index, "n")[FENCE]["deleted"] is True
            assert stored(es, index, "fresh") == {"v": 1, FENCE: {"token": old.fencing_token, "key": key}}
            new.release()
        finally:
            stalled.resume()


def test_a_lock_known_lost_and_a_bad_change_send_nothing(locks, es):
    key, index = unique(), unique("fc")
    recording = Recording(es)

    def sent() -> list[str]:
        return [p for p in recording.paths if index in p or p.startswith("/_bulk")]

    with eslm.Locks(recording) as client:
        held = client.acquire(key, lease="30s")
        for change, says in ((42, "must be a partial document"),
                             ([{"op": "inc", "field": "n"}], r"\[inc\] needs a \[value\]"),
                             ({FENCE: 1}, r"must not set \[eslm_fence\]"),
                             ([ops.inc("n"), "n"], "entry 1"),
                             ([{"op": "set", "field": "a..b", "value": 1}], "empty segment"),
                             ([{"op": "inc", "field": "n", "value": 1, "by": 2}], "unknown member")):
            with pytest.raises(eslm.InvalidArgument, match=says):
                held.update(index, "d", change)
        for bad in (lambda: ops.inc("n", by="1"), lambda: ops.inc("n", by=True), lambda: ops.inc("n", by=float("nan")),
                    lambda: ops.set(f"{FENCE}.token", 9), lambda: ops.remove(""),
                    lambda: held.bulk([(index, "d", lambda doc: doc)]), lambda: held.bulk([(index, "d")]),
                    lambda: held.bulk([(index, "a", {"v": 1}), (index, "b", 7)]),
                    lambda: held.update("", "d", {"v": 1}), lambda: held.delete(index, None)):
            with pytest.raises(eslm.InvalidArgument):
                bad()
        assert sent() == [] and not es.indices.exists(index=index), "refused before anything was sent"

        locks.force_release(key, reason="a test takes the lock away")
        wait_until(lambda: held.lost, 30, message="the loss watch to report the force-release")
        for lost_call in (lambda: held.update(index, "d", {"v": 1}), lambda: held.update(index, "d", lambda d: d),
                          lambda: held.read(index, "d"), lambda: held.delete(index, "d"),
                          lambda: held.bulk([(index, "d", {"v": 1})])):
            with pytest.raises(eslm.LockLost):
                lost_call()
        assert sent() == [], "a lock known lost sends nothing"
        with pytest.raises(eslm.LockLost):
            held.release()


def test_a_multi_lock_names_the_key_whose_token_fences_a_change(locks, es):
    a, b, index = unique(), unique(), unique("fc")
    with locks.lock_many([a, b]) as held:
        with pytest.raises(eslm.InvalidArgument, match=r"\[key\] is required"):
            held.update(index, "d", {"x": 1})
        assert held.update(index, "d", {"x": 1}, key=b) == {"x": 1}
        assert stored(es, index, "d")[FENCE] == {"token": held.tokens[b], "key": b}
        with pytest.raises(eslm.IllegalArgument, match="not the lock that fences this document"):
            held.update(index, "d", {"x": 2}, key=a)
        assert [r.outcome for r in held.bulk([(index, "d", [ops.inc("x")])], key=b)] == ["applied"]


def test_the_async_client_changes_documents_fenced_alike(es_node, locks):
    key, index = unique(), unique("fc")

    async def main():
        aes = AsyncElasticsearch(es_node.url)
        stalled = AsyncStalledRenewals(aes)
        try:
            async with eslm.AsyncLocks(stalled, loss_watches=0) as first, eslm.AsyncLocks(aes) as second:
                old = await first.acquire(key, lease="1s")
                assert await old.update(index, "n", {"n": 1}) == {"n": 1}
                assert await old.update(index, "n", [ops.inc("n"), ops.append("by", "old")]) == {"n": 2, "by": ["old"]}
                assert await old.read(index, "n") == {"n": 2, "by": ["old"]}
                await old.delete(index, "d")
                assert await old.read(index, "d") is None
                with pytest.raises(eslm.InvalidArgument):
                    await old.update(index, "n", 7)

                async def lease_out():
                    while (await second.get(key))["holders"]:
                        await asyncio.sleep(0.05)

                await asyncio.wait_for(lease_out(), 30)
                new = await second.acquire(key, lease="30s")
                assert await new.update(index, "n", lambda doc: {**doc, "n": doc["n"] * 10}) == {"n": 20, "by": ["old"]}
                with pytest.raises(eslm.StaleToken) as refused:
                    await old.update(index, "n", [ops.inc("n")])
                assert (refused.value.fence, refused.value.token) == (new.fencing_token, old.fencing_token)
                with pytest.raises(eslm.StaleToken):
                    await old.update(index, "n", lambda doc: {"n": 0})   # its fenced read is refused
                with pytest.raises(eslm.StaleToken):
                    await old.delete(index, "n")
                results = await old.bulk([(index, "n", {"n": 0}), (index, "other", [ops.inc("c")])])
                assert [r.outcome for r in results] == ["stale", "applied"] and results[1].source == {"c": 1}
                assert (await new.bulk([(index, "n", ops.DELETE)]))[0].applied
                assert await new.read(index, "n") is None
                await new.release()
        finally:
            stalled.resume()
            await aes.close()

    asyncio.run(main())
