"""The client across owner changes on three nodes (issue 14), through the official client's
node pool, whose transport is told not to retry 503 itself, so every 503 reaches eslm's own
retry:

* planned moves of the lock partition (tests/integration/cluster_kit.py's `move_partition`)
  while clients keep acquiring and releasing: they never see an error;
* the owner killed (`memory` durability, docs/API.md: its partition waits out a recovery grace
  on the new owner, answering 503 to grants): a try-lock fails at once, an acquire retries
  only within its `wait` and then raises, and a wait longer than the grace is granted after
  it."""

from __future__ import annotations

import logging
import signal
import threading
import time

import pytest
from elasticsearch import Elasticsearch

import node as esnode
from cluster_kit import (
    COPIES_MAY_SIT_ON_THE_MASTER,
    FAST_FAULT_DETECTION,
    http,
    keys_in_partition,
    live,
    move_partition,
    owner_of_partition,
    serving_nodes,
    started_primary_in_state_of,
)
from lockclient import unique, wait_until

import eslm


GRACE_S = 25  # counted from the old owner's loss: fault detection spends some of it
SHORT_WAIT_S = 3  # an acquire's wait well within what is left of the grace


def started(name: str, **settings):
    """A fresh three-node cluster (stopped after its last test: one cluster at a time)."""
    # Named with the version: make test runs this suite on two versions at once.
    cluster = esnode.Cluster(name, 3, extra_settings={"cluster.routing.rebalance.enable": "none", **settings})
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


# Shared by the planned moves and, after them, the stopped node (which it leaves with two nodes):
# the tests that use it come last in the module, so it never runs beside `memory_nodes`.
@pytest.fixture(scope="module")
def three_nodes():
    yield from started("eslm-py-client-move", **COPIES_MAY_SIT_ON_THE_MASTER)


@pytest.fixture()
def memory_nodes():
    yield from started("eslm-py-client-grace", **{
        "locks.durability": "memory", "locks.lease.max": "8s", "locks.lease.default": "8s",
        "locks.recovery.grace": f"{GRACE_S}s", **FAST_FAULT_DETECTION})


class Worker(threading.Thread):
    """Takes and releases its own key back to back until stopped; counts pairs, keeps errors."""

    def __init__(self, es: Elasticsearch):
        super().__init__(daemon=True)
        self.locks = eslm.Locks(es)
        self.key = unique()
        self.pairs = 0
        self.errors: list[BaseException] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                with self.locks.lock(self.key, lease="10s", wait="30s"):
                    pass
                self.pairs += 1
            except Exception as e:  # noqa: BLE001 (any error fails the test)
                self.errors.append(e)


def without_a_copy(cluster):
    """A node holding no copy of partition 0 (a primary moves only to such a node)."""
    shards = http(cluster.nodes[0], "GET", "/_cat/shards/.locks?format=json&h=shard,node").json()
    with_copy = {s["node"] for s in shards if s["shard"] == "0"}
    return next(n for n in live(cluster) if n.name not in with_copy)


@pytest.mark.slow
def test_503_in_recovery_grace_is_retried_within_the_callers_budget_never_beyond(memory_nodes, caplog):
    caplog.set_level(logging.INFO, logger="eslm")
    owner, _epoch = owner_of_partition(memory_nodes)
    survivors = [n for n in memory_nodes.nodes if n is not owner]
    es = Elasticsearch([n.url for n in survivors], retry_on_status=())
    locks = eslm.Locks(es, retry_for="60s")
    try:
        owner.kill()
        seen: list = []

        def in_grace_on_a_survivor():
            serving = serving_nodes(survivors, 0)
            seen[:] = [(n.name, p["state"], p.get("grace_left_ms")) for n, p in serving]
            return next((n.name for n, p in serving if p["state"] == "grace"), None)

        try:
            in_grace = wait_until(in_grace_on_a_survivor, 60, message="the partition in recovery grace on a survivor")
        except AssertionError as e:
            raise AssertionError(f"{e}; the survivors serving it, state and grace left: {seen}") from None
        # Both survivors route to the new owner (a coordinator still holding the state with the
        # dead owner waits for the next one: a routing retry of the server's, not the client's).
        wait_until(lambda: all(started_primary_in_state_of(n) == in_grace for n in survivors), 30,
                   message="both survivors' cluster states naming the new owner")
        t0 = time.monotonic()
        with pytest.raises(eslm.PartitionUnavailable) as at_once:
            locks.try_lock(unique())
        assert time.monotonic() - t0 < 1.0 and at_once.value.status == 503  # a try-lock has no budget
        # A wait of a few seconds, not one: the first answer must come back within it for the
        # client to retry at all, and a loaded machine (CI runs five lanes on two cores) can
        # spend most of a second on one round trip.
        t0 = time.monotonic()
        with pytest.raises(eslm.PartitionUnavailable) as gave_up:
            locks.acquire(unique(), wait=f"{SHORT_WAIT_S}s")
        spent = time.monotonic() - t0
        tried = [r.getMessage() for r in caplog.records if "answered 503" in r.getMessage()]
        outcome = f"gave up after {spent:.2f}s: {gave_up.value}; retries: {tried}"
        # Given up once the next backoff (at most steps.BACKOFF_MAX_S) would end past the wait.
        assert SHORT_WAIT_S - 1.0 <= spent < SHORT_WAIT_S + 1.5, outcome
        within_wait = len(tried)
        assert within_wait >= 1, f"the acquire retried the 503 within its wait ({outcome})"
        # A wait longer than what is left of the grace: the node queues it until the grace is
        # over (docs/API.md), well past the client's default 10 s request timeout, which eslm
        # lengthens for a call that waits (steps.WAIT_MARGIN_S).
        t0 = time.monotonic()
        with locks.lock(unique(), wait="60s") as held:
            waited = time.monotonic() - t0
        assert held.fencing_token > 0 and held.released
        print(f"granted after {waited:.1f}s of grace; 503s retried within the {SHORT_WAIT_S} s wait: {within_wait}")
    finally:
        es.close()


@pytest.mark.slow
def test_clients_keep_locking_through_partition_moves(three_nodes, caplog):
    caplog.set_level(logging.INFO, logger="eslm")
    es = Elasticsearch([n.url for n in three_nodes.nodes], retry_on_status=())
    workers = [Worker(es) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        for _ in range(3):
            before = [w.pairs for w in workers]
            move_partition(three_nodes, without_a_copy(three_nodes))
            assert [w.pairs for w in workers] != before, "no pair completed during a move"
    finally:
        for w in workers:
            w.stopped.set()
        for w in workers:
            w.join(60)
        es.close()
    assert [w.errors for w in workers] == [[], []]
    assert all(w.pairs > 0 for w in workers)
    retried = [r.getMessage() for r in caplog.records if "answered 503" in r.getMessage()]
    print(f"pairs {[w.pairs for w in workers]}; 503s retried by eslm: {len(retried)}")


def tasks_on(node, action: str) -> list[str]:
    """Names of the nodes that run a task of `action` now (coordinators and owners alike)."""
    nodes = http(node, "GET", f"/_tasks?actions={action}").json()["nodes"]
    return sorted(n["name"] for n in nodes.values() for _ in n["tasks"])


@pytest.mark.slow
def test_a_waiter_queued_through_a_stopping_node_is_granted_through_another(three_nodes, caplog):
    """SIGTERM to the node a 5-minute acquire queued through (docs/RELIABILITY.md "Stopping a
    node"): the node answers it 503 `node_shutting_down` at once and exits within seconds; eslm
    retries the 503 through the next node of the official client's pool, where the acquire
    queues with the wait it has left and is granted when the holder releases. The holder's
    handle (watchdog renewals and its loss watch, through a pool with every node) keeps its lock
    and token across the shutdown."""
    caplog.set_level(logging.INFO, logger="eslm")
    owner, _epoch = owner_of_partition(three_nodes)
    others = [n for n in live(three_nodes) if n is not owner]
    key = keys_in_partition(others[0], 0, "py-stop", 1)[0]
    holder_es = Elasticsearch([n.url for n in three_nodes.nodes], retry_on_status=())
    # In this order and not shuffled, the pool's round robin sends the first request through the
    # partition's owner, so the waiter queues on the node that is stopped.
    waiter_es = Elasticsearch([owner.url, others[1].url], retry_on_status=(), randomize_nodes_in_pool=False)
    try:
        holder = eslm.Locks(holder_es).acquire(key, lease="5m")
        token = holder.fencing_token
        got: dict = {}

        def wait_for_it():
            try:
                got["held"] = eslm.Locks(waiter_es, owner="py-waiter").acquire(key, wait="5m", lease="1m")
            except Exception as e:  # noqa: BLE001 (asserted below)
                got["error"] = e
        waiter = threading.Thread(target=wait_for_it, daemon=True)
        waiter.start()
        wait_until(lambda: [w["owner"] for w in http(owner, "GET", f"/_locks/{key}").json()["waiters"]]
                   == ["py-waiter"], 30, message="the waiter queued on the owner")
        assert tasks_on(owner, "cluster:admin/locks/acquire") == [owner.name], "queued through the owner"

        sent = time.monotonic()
        owner.process.send_signal(signal.SIGTERM)
        code = owner.process.wait(timeout=120)
        exited_after = time.monotonic() - sent
        print(f"\n{owner.name}: SIGTERM to exit {exited_after:.2f}s (exit code {code})")
        assert exited_after < 10.0, owner.tail_log(80)

        wait_until(lambda: [w["owner"] for w in http(others[0], "GET", f"/_locks/{key}").json()["waiters"]]
                   == ["py-waiter"], 60, message="the waiter queued again at the new owner")
        assert waiter.is_alive(), got
        holders = http(others[0], "GET", f"/_locks/{key}").json()["holders"]
        assert [(h["owner"], h["fencing_token"]) for h in holders] == [(holder.owner, token)], holders
        holder.release()
        waiter.join(60)
        assert "held" in got, got.get("error")
        assert got["held"].fencing_token > token
        # Who re-sent the 503: eslm (its log names the call and the error), or, with
        # elasticsearch-py 8.0, the official client's own transport, which retries a 503 through
        # the next node even when given `retry_on_status=()` (an empty tuple counts as "not set"
        # there), so eslm never sees it.
        messages = [r.getMessage() for r in caplog.records]
        by_eslm = any("answered 503" in m and "_acquire" in m and "lock_partition_unavailable_exception" in m
                      for m in messages)
        by_transport = any("Retrying request after non-successful status 503" in m for m in messages)
        assert by_eslm or by_transport, messages
        got["held"].release()
    finally:
        holder_es.close()
        waiter_es.close()
