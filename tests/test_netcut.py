"""scripts/netcut.py's rules stay with their cluster: the test lanes run clusters with cuts side by
side, so one cluster's heal must leave another's cut in place (a fresh-clone CI run of 29c1f67 lost
a master's cut mid-test to another lane's heal of every rule). Needs root and iptables, as the
fault tests do; the rules name ports nothing listens on and users that run nothing of ours."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import netcut  # noqa: E402

pytestmark = pytest.mark.skipif(netcut.usable() is not None, reason=str(netcut.usable()))


@dataclass(frozen=True)
class FakeNode:
    name: str
    user: str
    http_port: int
    transport_port: int


def rules_of(node) -> list[str]:
    tag = f'"{netcut.TAG} {node.user}"'
    return [line for table, chain in (("filter", "INPUT"), ("filter", "OUTPUT"), ("mangle", "OUTPUT"))
            for line in netcut._iptables("-t", table, "-S", chain).stdout.splitlines() if tag in line]


def test_a_heal_of_one_cluster_leaves_another_clusters_cut():
    # Same node name in both clusters, as every cluster has its node-0: only the user tells them apart.
    ours, theirs = FakeNode("node-0", "nobody", 9, 11), FakeNode("node-0", "daemon", 13, 17)
    try:
        netcut.cut(ours)
        netcut.cut(theirs)
        netcut.cut_one_way(theirs, ours)
        assert len(rules_of(ours)) == 4 and len(rules_of(theirs)) == 5, (rules_of(ours), rules_of(theirs))
        assert netcut.heal_all([ours]) == 4
        assert rules_of(ours) == []
        assert len(rules_of(theirs)) == 5, "the other cluster's cut, one-way cut and mark stay"
    finally:
        netcut.heal_all([ours, theirs])
    assert rules_of(ours) == rules_of(theirs) == []
