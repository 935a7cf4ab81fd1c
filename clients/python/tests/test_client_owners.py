"""Owners, safe by default (issue 27): threads sharing one `Locks` and tasks sharing one
`AsyncLocks` exclude each other (an owner per acquisition), reentrancy only when asked for
(`reentrant=True`, `owner=`, `with_owner`), a grant that arrives after its lease could have
ended is never handed over as held, and a client's lifecycle (`close()`, `with Locks(...)`),
its redis-py-style checks and its connection errors. Against a real node (conftest.py)."""

from __future__ import annotations

import asyncio
import threading
import time

import elastic_transport
import pytest
from elasticsearch import AsyncElasticsearch, Elasticsearch

import eslm
from lockclient import unique, wait_until

ROUNDS = 15  # per worker; each hold lasts HOLD_S, so shared grants would overlap many times
HOLD_S = 0.03


class Inside:
    """Counts who is inside a critical section now, and the most ever at once."""

    def __init__(self):
        self.now = self.most = self.entries = 0
        self.mutex = threading.Lock()

    def enter(self):
        with self.mutex:
            self.now += 1
            self.entries += 1
            self.most = max(self.most, self.now)

    def leave(self):
        with self.mutex:
            self.now -= 1


def test_threads_sharing_one_client_exclude_each_other(locks):
    """Two threads, one `Locks`, one key: with one owner per client both would be granted at
    once (the second acquire a reentrant grant) and `most` would reach 2."""
    key, inside = unique(), Inside()

    def worker():
        for _ in range(ROUNDS):
            with locks.lock(key, wait="20s"):
                inside.enter()
                time.sleep(HOLD_S)
                inside.leave()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert (inside.entries, inside.most) == (2 * ROUNDS, 1)


def test_tasks_sharing_one_async_client_exclude_each_other(es_node):
    key, inside = unique(), Inside()

    async def worker(alocks):
        for _ in range(ROUNDS):
            async with alocks.lock(key, wait="20s"):
                inside.enter()
                await asyncio.sleep(HOLD_S)
                inside.leave()

    async def main():
        async with AsyncElasticsearch(es_node.url) as aes:
            async with eslm.AsyncLocks(aes) as alocks:
                await asyncio.gather(worker(alocks), worker(alocks))

    asyncio.run(main())
    assert (inside.entries, inside.most) == (2 * ROUNDS, 1)


def test_reentrant_is_scoped_to_the_task(es_node):
    """`reentrant=True` nests within one task, and two tasks asking it still exclude each other."""
    key = unique()

    async def main():
        async with AsyncElasticsearch(es_node.url) as aes, eslm.AsyncLocks(aes) as alocks:
            async with alocks.lock(key, reentrant=True) as outer:
                async with alocks.lock(key, reentrant=True) as inner:
                    nested = (inner.nested, inner.fencing_token == outer.fencing_token)
                other_task = await asyncio.create_task(alocks.try_lock(key, reentrant=True))
                still_held = await outer.owned()
            return nested, other_task, still_held

    nested, other_task, still_held = asyncio.run(main())
    assert nested == (True, True) and other_task is None and still_held


def test_an_explicit_owner_is_reentrant_wherever_it_is_used(locks, holders):
    """`with_owner(owner)`: one owner for every acquire of the view, in any thread."""
    key, worker = unique(), locks.with_owner(unique("worker"))
    with worker.lock(key) as outer:
        granted = []
        t = threading.Thread(target=lambda: granted.append(worker.acquire(key)))
        t.start()
        t.join(10)
        assert granted and granted[0].nested and granted[0].fencing_token == outer.fencing_token
        granted[0].release()
        assert holders(key) == [outer.owner] == [worker.owner]
        assert locks.try_lock(key) is None, "the client's own acquires are other owners"
    assert holders(key) == []
    worker.close()  # a view's close does nothing
    assert locks.try_lock(key) is not None


class LateAnswers:
    """The user's `Elasticsearch`, answering acquires `delay` seconds late: the request reaches
    the real node at once and is granted there; only its answer is held back, as a stalled
    coordinating node or a slow network would."""

    def __init__(self, es: Elasticsearch, delay: float):
        self.es, self.delay = es, delay

    def perform_request(self, method, path, **kw):
        answer = self.es.perform_request(method, path, **kw)
        if path.endswith("/_acquire"):
            time.sleep(self.delay)
        return answer

    def options(self, **kw) -> "LateAnswers":
        return LateAnswers(self.es.options(**kw), self.delay)


def test_a_grant_answered_after_its_lease_is_not_handed_over(es, other, holders):
    """Lease 1 s, answer 1.5 s late; meanwhile another owner waiting for the key gets it when
    the lease ends. The late grant must be reported as not acquired, not handed over."""
    key = unique()
    taken = []
    with eslm.Locks(LateAnswers(es, 1.5)) as late:
        def contender():
            wait_until(lambda: holders(key), 5, message="the late acquire was granted on the node")
            taken.append(other.acquire(key, wait="10s", lease="30s"))

        t = threading.Thread(target=contender)
        t.start()
        with pytest.raises(eslm.GrantExpired) as expired:
            late.acquire(key, lease="1s")
        t.join(15)
        assert isinstance(expired.value.__cause__, eslm.LockNotHeld)
        assert isinstance(expired.value, eslm.LockConflict), "not acquired: try_lock would answer None"
        assert taken and holders(key) == [taken[0].owner]
        assert late.live == set(), "nothing to release or renew at close"
    taken[0].release()


def test_a_late_grant_still_within_its_lease_is_renewed_before_it_is_handed_over(es, holders):
    """Lease 3 s, answer 1.5 s late (past the first renewal, at 1 s): renewed first, so the
    lease left on the node when the caller gets it is nearly a whole lease, not 1.5 s."""
    key = unique()
    with eslm.Locks(LateAnswers(es, 1.5)) as late:
        with late.lock(key, lease="3s") as held:
            left = [h["lease_ms"] for h in late.get(key)["holders"]]
            assert held.handed_over and not held.lost and holders(key) == [held.owner]
            assert left and left[0] > 2_500, f"lease left {left} ms: not renewed before the hand-over"


def test_close_releases_what_it_holds_and_stops_every_thread(es, holders):
    before = set(threading.enumerate())
    client = eslm.Locks(es)
    kept, released = unique(), unique()
    client.acquire(kept, lease="2s")  # watchdog and loss watch running
    client.acquire(released).release()
    with client.session(ttl="2s") as session:
        session.acquire(unique())
        started = set(threading.enumerate()) - before
        assert any(t.name.startswith("eslm-") for t in started), "the watchdog and watches run"
        client.close()
    assert session.ended and holders(kept) == []
    assert [t.name for t in started if t.is_alive()] == []
    with pytest.raises(eslm.InvalidArgument, match="closed"):
        client.acquire(unique())


def test_with_locks_lets_go_at_the_end_of_the_block(es, holders):
    key = unique()
    with eslm.Locks(es) as scoped:
        held = scoped.acquire(key, lease="30s")
        assert holders(key) == [held.owner]
    assert holders(key) == [] and held.released


def test_locked_owned_and_extend(locks, other):
    key = unique()
    assert not locks.locked(key)
    held = locks.acquire(key, lease="2s")
    assert held.locked() and held.owned() and locks.locked(key) and other.locked(key)
    held.extend("20s")
    assert held.lease_ms == 20_000 and held.options.lease_ms == 20_000
    assert locks.get(key)["holders"][0]["lease_ms"] > 15_000
    other.force_release(key)
    assert not held.owned() and not held.locked()
    with pytest.raises(eslm.LockNotHeld):
        held.extend("5s")
    assert held.lost


def test_a_connection_failure_is_the_clients_own_error():
    dead = Elasticsearch("http://127.0.0.1:9", max_retries=0)  # port 9 (discard): refused here
    with eslm.Locks(dead) as locks:
        with pytest.raises(eslm.LockConnectionError) as failed:
            locks.acquire(unique())
    assert isinstance(failed.value, eslm.LockError) and isinstance(failed.value, ConnectionError)
    assert isinstance(failed.value.__cause__, elastic_transport.ConnectionError)
    dead.close()
