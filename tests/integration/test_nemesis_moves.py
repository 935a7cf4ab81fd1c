"""The fault test on four nodes, where moves really move (docs/RELIABILITY.md "Relocation under
faults"): the load and checker of test_nemesis.py (tests/integration/nemesis_run.py), with a
nemesis whose faults every round begins with the relocation faults — a planned move of the lock
partition under load, and the move's source or target frozen (around the plugin's bounds) or
killed -9 at a seeded moment before, during or just after the hand-over — then the three-node
run's faults. On three nodes with the copies kept off the master no node is free to take the
partition, so a move there changes nothing.

Seeded and bounded as test_nemesis.py: `ESLM_NEMESIS_SEED`, and `ESLM_NEMESIS_MOVES_SECONDS`
(default 150) of faults at least. `ESLM_NEMESIS_FLAW` runs it on the fault-injection build with
that flaw (e.g. `source_serves_after_hand_over`), where it must fail."""

from __future__ import annotations

import os
import random

import pytest

from cluster_kit import ThreeNodes
from nemesis import OPTIONAL, REQUIRED, REQUIRED_MOVES
from nemesis_run import SETTINGS, run

pytestmark = [pytest.mark.slow, pytest.mark.figures]

SEED = int(os.environ.get("ESLM_NEMESIS_SEED") or random.SystemRandom().randrange(2**31))
SECONDS = float(os.environ.get("ESLM_NEMESIS_MOVES_SECONDS") or 150)
CLUSTER = "eslm-it-nemesis-moves"
FLAW = os.environ.get("ESLM_NEMESIS_FLAW")

THREE_NODES = ThreeNodes(CLUSTER, SETTINGS, users="eslmmove", cuts=True, size=4,
                         variant="fault-injection" if FLAW else None, env={"ESLM_FAULT_FLAW": FLAW} if FLAW else {})


def test_moves_under_load_and_faults_keep_one_owner_every_holder_and_rising_tokens(cluster):
    run(cluster, CLUSTER, SECONDS, SEED, REQUIRED_MOVES, REQUIRED + OPTIONAL, FLAW)
