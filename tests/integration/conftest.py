"""The nodes the integration modules run on (issue 39 item 5), each configured by the module that
asks for it: `cluster`, nodes described by the module's `THREE_NODES` (`cluster_kit.ThreeNodes`:
the cluster's name, its settings, whether it cuts traffic, its size), and `own_node`, a single
node of the module's own described by its `ONE_NODE` (`cluster_kit.OneNode`: settings, security,
the plugin variant, an extending plugin), with `lc`, the tests' HTTP helper on it. A module whose
tests each break their nodes takes `fresh_node` and `fresh_cluster`: the same descriptions, new
nodes for every test. (The node most modules share, `single_node`, and its `locks` client are in
tests/conftest.py; a node that must refuse to start is `cluster_kit.refused_start`.) Real nodes
from the integ-test-zip with the plugin installed by `elasticsearch-plugin install`
(scripts/node.py), stopped after their last test."""

from __future__ import annotations

import uuid

import pytest

import netcut
import node as esnode
from cluster_kit import OneNode, ThreeNodes
from lockclient import LockClient


def _spec(request, name: str, kind):
    spec = getattr(request.module, name, None)
    if spec is None:
        pytest.fail(f"{request.module.__name__} asks for a node without a {name} = {kind.__name__}(...)")
    return spec


def _cluster(spec: ThreeNodes, name: str):
    if spec.cuts:
        why = netcut.usable()
        if why is not None:
            pytest.fail(f"{spec.name} cuts traffic between nodes with iptables: {why}")
    c = esnode.Cluster(name, spec.size, users=spec.users, variant=spec.variant, extra_settings=spec.settings,
                       env=spec.env)
    if spec.cuts:
        netcut.heal_all(c.nodes)  # what a run killed half-way left of this cluster's cuts
    try:
        c.start()  # inside: a node that failed to start must not leave the others running
        yield c
    finally:
        if spec.cuts:
            netcut.heal_all(c.nodes)
        for n in c.nodes:
            n.thaw()  # a frozen JVM would never act on SIGTERM
        c.stop()


def _node(spec: OneNode, name: str):
    also = (esnode.example_plugin_zip(esnode.es_version()),) if spec.with_example_plugin else ()
    node = esnode.Node(name, "node-0", esnode.free_port(), esnode.free_port(), extra_settings=spec.settings,
                       security=spec.security)
    yield from esnode.running(node, variant=spec.variant, also=also)


def _fresh(name: str) -> str:
    """A folder of its own under build/ for one test's nodes, so a failed test's logs stay."""
    return f"{name}-{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def cluster(request):
    spec: ThreeNodes = _spec(request, "THREE_NODES", ThreeNodes)
    yield from _cluster(spec, spec.name)


@pytest.fixture()
def fresh_cluster(request):
    spec: ThreeNodes = _spec(request, "THREE_NODES", ThreeNodes)
    yield from _cluster(spec, _fresh(spec.name))


@pytest.fixture(scope="module")
def own_node(request):
    spec: OneNode = _spec(request, "ONE_NODE", OneNode)
    yield from _node(spec, spec.name)


@pytest.fixture()
def fresh_node(request):
    spec: OneNode = _spec(request, "ONE_NODE", OneNode)
    yield from _node(spec, _fresh(spec.name))


@pytest.fixture()
def lc(own_node):
    """The tests' HTTP helper (lockclient.LockClient) on the module's own node."""
    client = LockClient(own_node.url)
    yield client
    client.close()
