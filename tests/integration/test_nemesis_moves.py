"""The fault test on four nodes, where moves really move (docs/RELIABILITY.md "Relocation under
faults"): the load and checker of test_nemesis.py (tests/integration/nemesis_run.py), with a
nemesis whose faults every round begins with the relocation faults — a planned move of the lock
partition under load, and the move's source or target frozen (around the plugin's bounds) or
killed -9 at a seeded moment before, during or just after the hand-over — then the three-node
run's faults. On three nodes with the copies kept off the master no node is free to take the
partition, so a move there changes nothing. Before it, on the same four nodes, one such fault on its
own: the move's target frozen once it serves, which must be failed over as any frozen owner.

Seeded and bounded as test_nemesis.py: `ESLM_NEMESIS_SEED`, and `ESLM_NEMESIS_MOVES_SECONDS`
(default 150) of faults at least. `ESLM_NEMESIS_FLAW` runs it on the fault-injection build with
that flaw (e.g. `source_serves_after_hand_over`), where it must fail."""

from __future__ import annotations

import os
import random
import time
import uuid

import pytest

from cluster_kit import (
    nodes_with_a_copy,
    first_grant_while_frozen,
    holders_of,
    http,
    live,
    move_partition,
    no_rebalancing,
    owner_of_partition,
    owner_that_is_not_the_master,
    settled,
    take,
    ThreeNodes,
)
from nemesis import OPTIONAL, REQUIRED, REQUIRED_MOVES
from nemesis_run import SETTINGS, run

pytestmark = [pytest.mark.slow, pytest.mark.figures]

SEED = int(os.environ.get("ESLM_NEMESIS_SEED") or random.SystemRandom().randrange(2**31))
SECONDS = float(os.environ.get("ESLM_NEMESIS_MOVES_SECONDS") or 150)
CLUSTER = "eslm-it-nemesis-moves"
FLAW = os.environ.get("ESLM_NEMESIS_FLAW")

THREE_NODES = ThreeNodes(CLUSTER, SETTINGS, users="eslmmove", cuts=True, size=4,
                         variant="fault-injection" if FLAW else None, env={"ESLM_FAULT_FLAW": FLAW} if FLAW else {})


# Well inside Elasticsearch's own removal of a silent node (three follower checks of 10 s): a grant
# sooner is the plugin's failover of the frozen owner (docs/ARCHITECTURE.md "Silent owners").
FROZEN_TARGET_WITHIN_S = 19


def test_a_move_target_frozen_once_it_serves_is_failed_over_like_any_owner(cluster):
    """The partition handed over to a node that had no copy, which is frozen once it serves and the
    master is idle (a publication in flight would hold the failover for `cluster.publish.timeout`;
    the nemesis freezes targets at any moment of the move): the master must fail over the owner the
    move made within its silence bound, and the next owner keep the
    holder taken before the move."""
    with no_rebalancing(cluster):
        owner, _, master = owner_that_is_not_the_master(cluster)
        settled(owner)
        with_copy = nodes_with_a_copy(owner)
        (target,) = [n for n in live(cluster) if n.name not in with_copy and n is not master]
        (via,) = [n for n in live(cluster) if n.name in with_copy and n is not owner]  # the replica's node
        held, asked = f"target-held-{uuid.uuid4().hex[:6]}", f"target-asked-{uuid.uuid4().hex[:6]}"
        token = take(via, held, "holder", lease="30s")  # this module's locks.lease.max
        move_partition(cluster, target)
        serving, epoch = owner_of_partition(cluster)  # a move made a failover says so in its epoch
        assert serving is target
        settled(target)
        renewed = http(via, "POST", f"/_locks/{held}/_renew", {"owner": "holder", "acquisition": "holder", "lease": "30s"})
        assert renewed.status_code == 200, renewed.text  # 30 s from here: past the freeze's bound
        assert target.freeze()
        frozen_at = time.monotonic()
        try:
            grant, after_s = first_grant_while_frozen(via, asked, frozen_at, FROZEN_TARGET_WITHIN_S)
        finally:
            target.thaw()
        print(f"\nthe move's target frozen once it served: a fresh key granted by the next owner after {after_s:.2f}s")
        assert grant["fencing_token"] >> 40 > epoch, "granted in a higher epoch by the next owner"
        assert holders_of(via, held) == [("holder", token)], "the holder from before the move kept its token"
        for k, who in ((held, "holder"), (asked, "during-freeze")):
            r = http(via, "POST", f"/_locks/{k}/_release", {"owner": who, "acquisition": who})
            assert r.status_code == 200, r.text
        settled(via)


def test_moves_under_load_and_faults_keep_one_owner_every_holder_and_rising_tokens(cluster):
    run(cluster, CLUSTER, SECONDS, SEED, REQUIRED_MOVES, REQUIRED + OPTIONAL, FLAW)
