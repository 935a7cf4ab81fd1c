"""The data a lock protects (issue 48 item 2, docs/RELIABILITY.md "Protected data"), on one node:
worker processes change documents under their locks through the Python client while the test stops
them past their leases (tests/integration/protected_data.py). With the plain recipe (a read, then a
write with the token as external version) the checker finds acknowledged increments lost; with the
client's fenced changes it finds every acknowledged change in the final documents, none refused,
and stale holders' changes refused by Elasticsearch. The same load runs under the nemesis's node
faults in tests/integration/test_nemesis.py. Seeded by ESLM_DATA_SEED (the workers' choices)."""

from __future__ import annotations

import os
import random
import time
import uuid

import pytest

from cluster_kit import OneNode
from protected_data import DataLoad, Spec, check, final_documents

pytestmark = pytest.mark.figures

SEED = int(os.environ.get("ESLM_DATA_SEED") or random.SystemRandom().randrange(2**31))
ONE_NODE = OneNode("eslm-it-protected-data")
ROUND_S = 20  # one round of the plain recipe
ROUNDS = 6  # at most: the plain recipe must be seen losing within them


def run(node, specs: list[Spec], seconds: float, index: str, **kw):
    load = DataLoad([node.url], index, specs, SEED, seconds, **kw)
    load.start()
    load.join()
    assert not load.errors, load.errors
    docs = sorted({d for s in specs for d in s.docs})
    report = check(load.records, final_documents(node.url, index, docs))
    print(f"\nseed {SEED} (ESLM_DATA_SEED reproduces the workers' choices), {load.pauses} pauses\n"
          + report.summary(), flush=True)
    return load, report


def test_the_plain_recipe_loses_acknowledged_increments_and_the_checker_finds_them(own_node):
    """Three holders increment one counter by a read, then an external_gte write, each pausing
    past its lease half the time between the two: a stale write lands between the next holder's
    read and write and is overwritten. Rounds go on until one shows it (the checker can fail)."""
    for round_ in range(ROUNDS):
        index = f"plain-{uuid.uuid4().hex[:6]}"
        _, report = run(own_node, [Spec("counter", ("c",), 3, recipe="plain")], ROUND_S, index,
                        pause_p=0.5, pause_s=(2.5, 4.0))
        if any("lost" in v for v in report.violations):
            return
    pytest.fail(f"seed {SEED}: in {ROUNDS} rounds the plain recipe never lost an increment; the check proves nothing")


def test_fenced_changes_keep_every_acknowledged_change_of_holders_paused_past_their_leases(own_node):
    index = f"fenced-{uuid.uuid4().hex[:6]}"
    specs = [Spec("counter", ("c1", "c2"), 3), Spec("list", ("l1",), 2), Spec("flag", ("f1",), 2)]
    started = time.monotonic()
    load, report = run(own_node, specs, 45, index, pause_p=0.3, pause_s=(2.5, 4.0))
    assert report.violations == [], f"seed {SEED}: " + report.summary()
    acknowledged = sum(n for k, n in report.counts.items() if k.endswith(" ok"))
    stale = sum(n for k, n in report.counts.items() if k.endswith(" stale"))
    assert acknowledged >= 20, f"too few changes to prove anything in {time.monotonic() - started:.0f}s: {report.counts}"
    assert load.pauses >= 5 and stale >= 1, f"no stale change reached Elasticsearch ({load.pauses} pauses): {report.counts}"
