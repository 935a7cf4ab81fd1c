"""The nodes the integration modules run on (issue 39 item 5), each configured by the module that
asks for it: `cluster`, three nodes described by the module's `THREE_NODES`
(`cluster_kit.ThreeNodes`: the cluster's name, its settings, and whether it cuts traffic), and
`own_node`, a single node of the module's own described by its `ONE_NODE` (`cluster_kit.OneNode`),
with `lc`, the tests' HTTP helper on it. (The node most modules share, `single_node`, and its
`locks` client are in tests/conftest.py.) Real nodes from the integ-test-zip with the plugin
installed by `elasticsearch-plugin install` (scripts/node.py), started once per module and
stopped after its last test."""

from __future__ import annotations

import pytest

import netcut
import node as esnode
from cluster_kit import OneNode, ThreeNodes
from lockclient import LockClient


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


@pytest.fixture(scope="module")
def own_node(request):
    spec: OneNode = getattr(request.module, "ONE_NODE", None)
    if spec is None:
        pytest.fail(f"{request.module.__name__} asks for `own_node` without a ONE_NODE = OneNode(...)")
    also = (esnode.example_plugin_zip(esnode.es_version()),) if spec.with_example_plugin else ()
    node = esnode.Node(spec.name, "node-0", esnode.free_port(), esnode.free_port(), extra_settings=spec.settings)
    yield from esnode.running(node, also=also)


@pytest.fixture()
def lc(own_node):
    """The tests' HTTP helper (lockclient.LockClient) on the module's own node."""
    client = LockClient(own_node.url)
    yield client
    client.close()
