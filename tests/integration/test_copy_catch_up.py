"""A copy acknowledges only what it applied (docs/RELIABILITY.md "A copy acknowledges only what it
applied"). With the test-only fault of the `fault-injection` plugin zip, a replica's standby skips
the delta that grants SKIP_KEY (it answers as if applied: what a lost or botched apply looks like).
The next delta shows the gap; the replica catches up with the owner's live state before it answers
it, so it stays in sync, and when the owner is killed the promoted copy serves every holder — the
skipped one included. Real nodes, HTTP only."""

from __future__ import annotations

import time

import pytest

from cluster_kit import (
    ThreeNodes,
    COPIES_MAY_SIT_ON_THE_MASTER,
    http,
    keys_in_partition,
    live,
    no_rebalancing,
    owner_that_is_not_the_master,
    rejoin,
    served,
    settled,
)

pytestmark = [pytest.mark.slow, pytest.mark.every_version]

SKIP_KEY = "eslm-fault-injection-skip-delta"
VARIANT = "fault-injection"


THREE_NODES = ThreeNodes("eslm-it-catch-up", {"cluster.routing.rebalance.enable": "none",
                                              # the test places the copies itself (`owner_that_is_not_the_master`)
                                              **COPIES_MAY_SIT_ON_THE_MASTER}, variant=VARIANT)


def replica_copy(node):
    """(node name, allocation id) of partition 0's replica."""
    rows = http(node, "GET", "/_cat/shards/.locks?format=json&h=shard,prirep,node,id").json()
    state = http(node, "GET", "/_cluster/state/routing_table/.locks").json()
    copies = state["routing_table"]["indices"][".locks"]["shards"]["0"]
    replica = next(c for c in copies if not c["primary"])
    name = next(r["node"] for r in rows if r["shard"] == "0" and r["prirep"] == "r")
    return name, replica["allocation_id"]["id"]


def test_a_replica_that_skipped_a_delta_catches_up_and_its_promotion_keeps_every_holder(cluster):
    with no_rebalancing(cluster):
        owner, epoch, _ = owner_that_is_not_the_master(cluster)
        settled(owner)
        via = next(n for n in live(cluster) if n is not owner)
        before = replica_copy(via)
        replica = cluster.node(before[0])
        (other,) = keys_in_partition(via, 0, "catch-up", 1)
        held = {}
        for key, who in ((SKIP_KEY, "skipped"), (other, "after-the-gap")):  # one partition: both in 0
            r = http(via, "POST", f"/_locks/{key}/_acquire", {"owner": who, "acquisition": who, "lease": "10m"})
            assert r.status_code == 200, r.text
            held[key] = (who, r.json()["fencing_token"])
        assert replica_copy(via) == before, "the replica stayed in sync: not failed, not recovering anew"
        assert "caught up with the owner" in replica.log_file.read_text(errors="replace"), \
            "the fault made the replica skip a delta, and the next one made it catch up"

        owner.kill()
        try:
            deadline = time.monotonic() + 60
            while served(via, f"/_locks/{other}") is None:
                assert time.monotonic() < deadline, "the promoted copy never served the partition"
                time.sleep(0.1)
            for key, (who, token) in held.items():
                holders = [(h["owner"], h["fencing_token"]) for h in served(via, f"/_locks/{key}")["holders"]]
                assert holders == [(who, token)], f"{key} after the promotion: {holders}"
            promoted = [p for n in live(cluster)
                        for p in http(n, "GET", "/_locks/_node/diagnostics").json()["core"]["partitions"]
                        if p["id"] == 0]
            assert [p["state"] for p in promoted] == ["active"] and promoted[0]["epoch"] > epoch, promoted
        finally:
            rejoin(owner, via)
