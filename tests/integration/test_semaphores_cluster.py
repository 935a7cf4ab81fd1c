"""A counting semaphore on a real three-node cluster (docs/API.md "Semaphores"): its holders
with their permits and tokens, its limit and its waiter survive partition moves and kill -9 of
the partition's owner like a lock's (tests/integration/test_replication.py), tokens keep
growing, and concurrent acquirers after the failover never hold more permits than the limit.
Kept apart from test_semaphores.py so that one node or one cluster runs at a time."""

from __future__ import annotations

import os
import random
import threading
import time

import pytest
import requests

from cluster_kit import (
    COPIES_MAY_SIT_ON_THE_MASTER,
    http,
    live,
    move_partition,
    owner_of_partition,
    owner_that_is_not_the_master,
    rejoin,
    reporting,
    served,
    settled,
    ThreeNodes,
)
from history import ACQUIRE, RELEASE, History, holds, token_order
from lockclient import unique, wait_until

pytestmark = pytest.mark.slow


# One partition, no rebalancing: the test moves it itself (as test_replication.py does).
THREE_NODES = ThreeNodes("eslm-it-semaphores", {"locks.partitions": 1, "cluster.routing.rebalance.enable": "none",
                                               **COPIES_MAY_SIT_ON_THE_MASTER})


def test_a_semaphore_survives_partition_moves_with_its_holders_limit_and_waiter(cluster):
    node = cluster.nodes[0]
    s = unique("sem")
    tokens = []
    for who, permits in (("a", 2), ("b", 1)):
        r = http(node, "POST", f"/_semaphores/{s}/_acquire", {"owner": who, "acquisition": who, "permits": permits, "limit": 3,
                                                               "lease": "5m"})
        assert r.status_code == 200, r.text
        tokens.append(r.json()["fencing_token"])
    answer = {}
    waiter = threading.Thread(target=lambda: answer.update(r=http(
        node, "POST", f"/_semaphores/{s}/_acquire",
        {"owner": "c", "acquisition": "c", "permits": 2, "limit": 3, "wait": "120s", "lease": "5m"}, timeout=150)))
    waiter.start()
    wait_until(lambda: waiters(node, s) == ["c"], 20, message="c queued")
    for move in range(2):
        # To the node without a copy of the shard (a move onto the replica's node is refused).
        shards = http(node, "GET", "/_cat/shards/.locks?format=json&h=shard,node").json()
        with_copy = {sh["node"] for sh in shards if sh["shard"] == "0"}
        target = next(n for n in live(cluster) if n.name not in with_copy)
        move_partition(cluster, target)
        state = http(target, "GET", f"/_semaphores/{s}").json()
        assert state["limit"] == 3, state
        assert sorted((h["owner"], h["permits"], h["fencing_token"]) for h in state["holders"]) == \
            [("a", 2, tokens[0]), ("b", 1, tokens[1])], f"move {move}: {state}"
        # Waiters are not replicated: the waiter's coordinator re-queues it on the new owner.
        requeued = wait_until(lambda: waiters(target, s), 30, message=f"move {move}: c queued again")
        assert requeued == ["c"], f"move {move}: {requeued}"
        r = http(target, "POST", f"/_semaphores/{s}/_acquire", {"owner": "d", "acquisition": "d", "limit": 4})
        assert r.status_code == 409 and r.json()["error"]["type"] == "semaphore_limit_mismatch_exception", r.text
    assert http(node, "POST", f"/_semaphores/{s}/_release", {"owner": "a", "acquisition": "a"}).status_code == 200
    waiter.join(60)
    r = answer["r"]
    assert r.status_code == 200, r.text
    assert r.json()["permits"] == 2 and r.json()["fencing_token"] > max(tokens)
    for who in ("b", "c"):
        assert http(node, "POST", f"/_semaphores/{s}/_release", {"owner": who, "acquisition": who}).status_code == 200


SEED = int(os.environ.get("ESLM_SEMAPHORE_SEED") or 15)
LIMIT = 3
ACQUIRERS = 5
ACQUIRE_S = 10  # how long the acquirers run after the failover


def test_holders_survive_kill_9_of_the_owner_and_permits_never_exceed_the_limit(cluster):
    """kill -9 of the owner (not the master) of the semaphore's partition, after its limit was
    lowered below the permits held: the promoted replica serves the holders with their permits
    and tokens and the lowered limit (through both survivors), a holder renews, the semaphore
    refuses a grant over the lowered limit, a release that leaves it over still grants nobody,
    the limit goes back up; then ACQUIRERS threads acquire and release 1-2 permits through both
    survivors for ACQUIRE_S (seeded), and the history shows never more than LIMIT permits
    certainly held at once, tokens rising in real-time order and all above every token issued
    before the kill."""
    owner, epoch, _ = owner_that_is_not_the_master(cluster)
    settled(owner)
    a, b = [n for n in live(cluster) if n is not owner]
    s = unique("sem")
    before = {}
    for who, permits in (("x", 2), ("y", 1)):
        r = http(a, "POST", f"/_semaphores/{s}/_acquire", {"owner": who, "acquisition": who, "permits": permits, "limit": LIMIT,
                                                            "lease": "2m"})
        assert r.status_code == 200, r.text
        before[who] = (permits, r.json()["fencing_token"])
    lowered = LIMIT - 1
    r = http(b, "POST", f"/_semaphores/{s}/_limit", {"limit": lowered})
    assert r.status_code == 200 and r.json()["held"] == 3, r.text
    answer = {}
    waiter = threading.Thread(target=lambda: answer.update(r=http(
        b, "POST", f"/_semaphores/{s}/_acquire",
        {"owner": "w", "acquisition": "w", "permits": 2, "limit": lowered, "wait": "120s"}, timeout=150)), daemon=True)
    waiter.start()
    wait_until(lambda: waiters(a, s) == ["w"], 20, message="w queued")

    owner.kill()
    try:
        wait_until(lambda: served(a, f"/_semaphores/{s}"), 60, 0.1, message="the semaphore served again")
        new_owner, new_epoch = owner_of_partition(cluster)
        assert new_owner is not owner and new_epoch > epoch
        for n in (a, b):
            state = http(n, "GET", f"/_semaphores/{s}").json()
            assert state["limit"] == lowered, state
            assert {h["owner"]: (h["permits"], h["fencing_token"]) for h in state["holders"]} == before, state
        r = http(b, "POST", f"/_semaphores/{s}/_renew", {"owner": "x", "acquisition": "x", "fencing_token": before["x"][1]})
        assert r.status_code == 200, r.text
        r = http(b, "POST", f"/_semaphores/{s}/_acquire", {"owner": "z", "acquisition": "z", "limit": lowered})
        assert r.status_code == 409 and r.json()["error"]["type"] == "lock_conflict_exception", r.text
        # Waiters are not replicated: w's coordinator queues it again on the new owner.
        wait_until(lambda: waiters(a, s) == ["w"], 30, message="w queued again")
        assert http(a, "POST", f"/_semaphores/{s}/_release", {"owner": "x", "acquisition": "x"}).status_code == 200
        assert waiters(a, s) == ["w"], "1 held + 2 asked is over the lowered limit"
        assert http(a, "POST", f"/_semaphores/{s}/_release", {"owner": "y", "acquisition": "y"}).status_code == 200
        waiter.join(60)
        assert answer["r"].status_code == 200, answer["r"].text
        granted = answer["r"].json()
        assert granted["permits"] == 2 and granted["fencing_token"] > before["y"][1], granted
        before["w"] = (2, granted["fencing_token"])
        r = http(b, "POST", f"/_semaphores/{s}/_limit", {"limit": LIMIT})
        assert r.status_code == 200 and r.json()["previous"] == lowered, r.text
        assert http(a, "POST", f"/_semaphores/{s}/_release", {"owner": "w", "acquisition": "w"}).status_code == 200
        history, permits = acquire_concurrently(s, [a, b])
        grants = [op for op in history.ops() if op.f == ACQUIRE and op.type == "ok"]
        assert len(grants) >= 20, f"seed {SEED}: only {len(grants)} grants: the run proved little"
        assert token_order(history.ops()) == [], [str(v) for v in token_order(history.ops())]
        assert min(op.token for op in grants) > max(t for _, t in before.values())
        assert {op.token >> 40 for op in grants} == {new_epoch}, "tokens carry the new epoch"
        most = most_permits_held(history, permits)
        print(f"\nseed {SEED}: {len(grants)} grants after the failover, at most {most} permits held at once")
        assert most <= LIMIT
    finally:
        rejoin(owner, a)


def waiters(node, s):
    r = http(node, "GET", f"/_semaphores/{s}", timeout=10)
    return [w["owner"] for w in r.json()["waiters"]] if r.status_code == 200 else None


def acquire_concurrently(s, nodes):
    """ACQUIRERS threads, each through one of `nodes`, acquiring (waiting) and releasing 1-2
    permits until ACQUIRE_S pass; answers the history and each grant's permits by token."""
    history, permits, errors = History(), {}, []
    deadline = time.monotonic() + ACQUIRE_S

    def acquirer(i):
        rng, node, who = random.Random(f"{SEED}-{i}"), nodes[i % len(nodes)], f"w{i}"
        session = requests.Session()
        while time.monotonic() < deadline:
            want = rng.choice((1, 2))
            op = history.invoke(who, ACQUIRE, key=s, owner=who, lease_s=10, node=node.name)
            r = session.post(f"{node.url}/_semaphores/{s}/_acquire", json={
                "owner": who, "acquisition": who, "permits": want, "limit": LIMIT, "wait": "5s", "lease": "10s"}, timeout=30)
            if r.status_code != 200:
                assert r.json()["error"]["type"] == "lock_wait_timeout_exception", r.text
                history.fail(op, status=str(r.status_code))
                continue
            history.ok(op, token=r.json()["fencing_token"], status="200")
            permits[op.token] = want
            time.sleep(rng.uniform(0.02, 0.2))
            release = history.invoke(who, RELEASE, key=s, owner=who, node=node.name)
            r = session.post(f"{node.url}/_semaphores/{s}/_release",
                             json={"owner": who, "fencing_token": op.token}, timeout=30)
            assert r.status_code == 200, r.text
            history.ok(release, status="200")

    threads = [threading.Thread(target=reporting, args=(errors, acquirer, i), daemon=True) for i in range(ACQUIRERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(ACQUIRE_S + 60)
    assert errors == [] and not [t for t in threads if t.is_alive()], errors
    return history, permits


def most_permits_held(history, permits):
    """The most permits certainly held at one moment: at each grant's answer, the permits of
    every grant certainly holding then (answered, not yet released, within its lease)."""
    hs = [h for h in holds(history.ops()) if not h.unchecked]
    return max((sum(permits[o.grant.token] for o in hs if o.certain_start <= h.certain_start < o.certain_end)
                for h in hs), default=0)
