"""A counting semaphore on a real three-node cluster (docs/API.md "Semaphores"): its holders
with their permits and tokens, its limit and its waiter survive partition moves like a lock's
(tests/integration/test_replication.py), and tokens keep growing. Kept apart from
test_semaphores.py so that one node or one cluster runs at a time."""

from __future__ import annotations

import threading

import pytest

from cluster_kit import http, live, move_partition, three_nodes
from lockclient import unique, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    # One partition, no rebalancing: the test moves it itself (as test_replication.py does).
    yield from three_nodes("eslm-it-semaphores",
                           {"locks.partitions": 1, "cluster.routing.rebalance.enable": "none"})


def test_a_semaphore_survives_partition_moves_with_its_holders_limit_and_waiter(cluster):
    node = cluster.nodes[0]
    s = unique("sem")
    tokens = []
    for who, permits in (("a", 2), ("b", 1)):
        r = http(node, "POST", f"/_semaphores/{s}/_acquire", {"owner": who, "permits": permits, "limit": 3,
                                                               "lease": "5m"})
        assert r.status_code == 200, r.text
        tokens.append(r.json()["fencing_token"])
    answer = {}
    waiter = threading.Thread(target=lambda: answer.update(r=http(
        node, "POST", f"/_semaphores/{s}/_acquire",
        {"owner": "c", "permits": 2, "limit": 3, "wait": "120s", "lease": "5m"}, timeout=150)))
    waiter.start()
    wait_until(lambda: [w["owner"] for w in http(node, "GET", f"/_semaphores/{s}").json()["waiters"]] == ["c"],
               20, message="c queued")
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
        requeued = wait_until(lambda: [w["owner"] for w in http(target, "GET", f"/_semaphores/{s}").json()["waiters"]],
                              30, message=f"move {move}: c queued again")
        assert requeued == ["c"], f"move {move}: {requeued}"
        r = http(target, "POST", f"/_semaphores/{s}/_acquire", {"owner": "d", "limit": 4})
        assert r.status_code == 409 and r.json()["error"]["type"] == "semaphore_limit_mismatch_exception", r.text
    assert http(node, "POST", f"/_semaphores/{s}/_release", {"owner": "a"}).status_code == 200
    waiter.join(60)
    r = answer["r"]
    assert r.status_code == 200, r.text
    assert r.json()["permits"] == 2 and r.json()["fencing_token"] > max(tokens)
    for who in ("b", "c"):
        assert http(node, "POST", f"/_semaphores/{s}/_release", {"owner": who}).status_code == 200
