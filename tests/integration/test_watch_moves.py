"""A watch across an owner move (docs/API.md "Watch a lock"): watches are not replicated; the
coordinating node sends a watch again to the partition's new owner, which finds the replicated
lock under the same token and keeps watching, so a force-release after the move still answers
the watch, with its reason. Three real nodes (tests/integration/cluster_kit.py)."""

from __future__ import annotations

import threading
import time

from cluster_kit import COPIES_MAY_SIT_ON_THE_MASTER, ThreeNodes, http, live, move_partition, owner_of_partition, settled
from lockclient import LockClient, ok, unique, wait_until


THREE_NODES = ThreeNodes("eslm-it-watch-moves", {
    "cluster.routing.rebalance.enable": "none", **COPIES_MAY_SIT_ON_THE_MASTER})


def test_a_watch_follows_its_lock_to_the_new_owner(cluster):
    settled(cluster.nodes[0])
    owner, _ = owner_of_partition(cluster)
    coordinator = next(n for n in live(cluster) if n is not owner)
    lc = LockClient(coordinator.url)
    k = unique("watch-move")
    token = ok(lc.acquire(k, "w-mover", lease="2m"))["fencing_token"]
    answer = {}

    def watch():
        answer["response"] = lc.watch(k, token=token, wait="90s", timeout=120)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    wait_until(lambda: ok(LockClient(owner.url).diagnostics())["pending_requests"] > 0, 30,
               message="the watch registered on the owner")
    shards = http(cluster.nodes[0], "GET", "/_cat/shards/.locks?format=json&h=shard,node").json()
    with_copy = {s["node"] for s in shards if s["shard"] == "0"}
    target = next(n for n in live(cluster) if n.name not in with_copy and n is not owner)
    move_partition(cluster, target)
    assert owner_of_partition(cluster)[0] is target
    # The coordinator sends the watch again; it waits on at the new owner, where the lock is
    # under the same token. (Ended before the watch arrives, it would answer `not_held`.)
    wait_until(lambda: ok(LockClient(target.url).diagnostics())["pending_requests"] > 0, 30,
               message="the watch registered again on the new owner")
    assert watcher.is_alive(), f"the watch answered during the move: {answer}"
    holders = ok(LockClient(target.url).get(k))["holders"]
    assert [h["fencing_token"] for h in holders] == [token], holders
    released_at = time.monotonic()
    ok(LockClient(target.url).force_release(k))
    watcher.join(30)
    assert not watcher.is_alive(), "the watch did not answer after the force-release"
    body = ok(answer["response"])
    assert body["changed"] is True and body["reason"] == "force_released", body
    assert time.monotonic() - released_at < 5
