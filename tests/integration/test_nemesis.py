"""A randomized fault test (docs/RELIABILITY.md): worker threads take and release a few keys
through random nodes of a three-node cluster — some for a moment, some for 5-20 s renewing every
second, now and then watching their lock or sending their acquire again — and readers read the
keys, while a nemesis (tests/integration/nemesis.py) kills -9, freezes (SIGSTOP/SIGCONT),
partitions (iptables), restarts, relocates the lock partition and forces master elections, with
Elasticsearch's default fault detection; every operation goes into a history on one clock
(tests/integration/history.py), and the checker proves afterwards that no two owners held a key
at once, that no renewal was refused while its lease ran, that tokens rose per key, that no
read, watch or re-entrant retry showed a lock that had ended or missed one certainly held; once the
faults are over and the cluster settled, every key must be granted again within LIVENESS_S.
Beside it, worker processes change documents under their locks through the Python client's fenced
changes, stopped now and then past their leases (nemesis_run.DATA_SPECS,
tests/integration/protected_data.py): every acknowledged change must be in the final documents and
none that was refused.

Seeded and bounded: `ESLM_NEMESIS_SEED` (else a random seed, printed) fixes the nemesis's
schedule and the workers' choices (not the cluster's own timing); `ESLM_NEMESIS_SECONDS`
(default 240) is how long faults are injected at least. The faults every run must make come
first in each round, but a loaded machine makes fewer faults in that time (CI once ended a run
before `pause_both` found the owner and the master on different nodes): such a run goes on
until it has made them all, for at most as long again. A long run:

    ESLM_NEMESIS_SECONDS=600 ESLM_NEMESIS_SEED=1 python3 -m pytest tests/integration/test_nemesis.py -v -s

The history of the last run is left in the cluster's folder (build/eslm-it-nemesis/, with the lane's
name added under make test) as history.jsonl for a post-mortem."""

from __future__ import annotations

import os
import random

import pytest

from cluster_kit import ThreeNodes
from nemesis import OPTIONAL, REQUIRED
from nemesis_run import DATA_SPECS, SETTINGS, run

pytestmark = [pytest.mark.slow, pytest.mark.figures]

SEED = int(os.environ.get("ESLM_NEMESIS_SEED") or random.SystemRandom().randrange(2**31))
SECONDS = float(os.environ.get("ESLM_NEMESIS_SECONDS") or 240)
CLUSTER = "eslm-it-nemesis"
#: A deliberately broken build to run on instead: the fault-injection plugin with this flaw
#: (`ESLM_FAULT_FLAW`, e.g. `ignores_lease`), on which the run must fail (docs/RELIABILITY.md
#: "A broken build").
FLAW = os.environ.get("ESLM_NEMESIS_FLAW")


# Three nodes (nemesis_run.SETTINGS); users of its own: the cuts (by user) must not reach the
# clusters of the lanes beside it.
THREE_NODES = ThreeNodes(CLUSTER, SETTINGS, users="eslmcut", cuts=True,
                         variant="fault-injection" if FLAW else None, env={"ESLM_FAULT_FLAW": FLAW} if FLAW else {})


def test_no_overlapping_holds_lost_holders_or_falling_tokens_under_faults(cluster):
    run(cluster, CLUSTER, SECONDS, SEED, REQUIRED, OPTIONAL, FLAW, data=DATA_SPECS)
