"""The three-node cluster every multi-node module runs on (issue 39 item 5): one fixture,
`cluster`, configured by the module that asks for it through its `THREE_NODES`
(`cluster_kit.ThreeNodes`: the cluster's name, its settings, and whether it cuts traffic). Real
nodes from the integ-test-zip with the plugin installed by `elasticsearch-plugin install`
(scripts/node.py), started once per module and stopped after its last test."""

from __future__ import annotations

import pytest

import netcut
import node as esnode
from cluster_kit import ThreeNodes


@pytest.fixture(scope="module")
def cluster(request):
    spec: ThreeNodes = getattr(request.module, "THREE_NODES", None)
    if spec is None:
        pytest.fail(f"{request.module.__name__} asks for `cluster` without a THREE_NODES = ThreeNodes(...)")
    if spec.cuts:
        why = netcut.usable()
        if why is not None:
            pytest.fail(f"{spec.name} cuts traffic between nodes with iptables: {why}")
    c = esnode.Cluster(spec.name, 3, users=spec.users, variant=spec.variant, extra_settings=spec.settings)
    try:
        c.start()  # inside: a node that failed to start must not leave the others running
        yield c
    finally:
        if spec.cuts:
            netcut.heal_all()
        for n in c.nodes:
            n.thaw()  # a frozen JVM would never act on SIGTERM
        c.stop()
