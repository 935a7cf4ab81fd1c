"""The cluster's membership changed under load (issue 48 item 5, docs/RELIABILITY.md "Membership and
whole-cluster crashes"): on three nodes with long holders and clients (tests/integration/held_load.py),

1. a fourth node joins, and the lock copies may move to it;
2. a node leaves the way an operator removes one: its shards moved off
   (`cluster.routing.allocation.exclude._name`), then stopped;
3. a node is replaced by an empty one of the same name: killed, its data folder wiped, started
   again (a new node id, no copies: Elasticsearch recovers them from the others);
4. every node killed -9 at once and started again.

After each: every long holder still holds its key with its token and a lease, through every node;
the clients are granted again. At the end the clients' history is checked (no two holders at once,
no renewal refused inside its lease, tokens rising per key) and the next token of every key is
larger than every token answered before. Seeded by ESLM_MEMBERSHIP_SEED (the clients' choices)."""

from __future__ import annotations

import os
import random
import shutil
import time

import pytest

import node as esnode
from cluster_kit import http
from held_load import GREEN_S, HeldLoad

pytestmark = [pytest.mark.slow, pytest.mark.figures]

SEED = int(os.environ.get("ESLM_MEMBERSHIP_SEED") or random.SystemRandom().randrange(2**31))
NAME = "eslm-it-membership"


@pytest.fixture
def load():
    cluster = esnode.Cluster(NAME, 3, extra_settings={"locks.partitions": 2})
    cluster.start()
    held = HeldLoad(cluster, SEED)
    try:
        yield held
    finally:
        held.close()


def add_node(cluster) -> esnode.Node:
    """A fourth node joining the running cluster (it bootstraps nothing: the cluster exists)."""
    first = cluster.nodes[0]
    settings = {k: v for k, v in first.extra_settings.items() if k != "cluster.initial_master_nodes"}
    node = esnode.Node(first.cluster, f"node-{len(cluster.nodes)}", esnode.free_port(), esnode.free_port(),
                       seed_ports=first.seed_ports, heap=first.heap, extra_settings=settings,
                       user=f"{esnode.RUN_AS}{len(cluster.nodes)}")
    node.install(first.version, esnode.plugin_zip(first.version))
    node.start()
    node.wait_until_ready(timeout=GREEN_S)
    cluster.nodes.append(node)
    return node


def exclude(via, name: str | None) -> None:
    r = http(via, "PUT", "/_cluster/settings", {"persistent": {"cluster.routing.allocation.exclude._name": name}})
    assert r.status_code == 200, r.text


def shards_on(via, name: str) -> list[str]:
    rows = http(via, "GET", "/_cat/shards?format=json&h=index,shard,prirep,state,node").json()
    return [f"{r['index']}/{r['shard']}{r['prirep']} {r['state']}" for r in rows if name in (r.get("node") or "")]


def test_nodes_added_removed_replaced_and_all_killed_keep_every_holder(load):
    cluster = load.cluster
    load.hold_long()
    load.start_clients()
    print(f"\nseed {SEED} (ESLM_MEMBERSHIP_SEED reproduces the clients' choices)", flush=True)

    started = time.monotonic()
    joined = add_node(cluster)
    load.green(joined, nodes=4)
    load.step(f"{joined.name} joined", started)

    started = time.monotonic()
    leaving = cluster.nodes[0]
    via = cluster.nodes[1]
    exclude(via, leaving.name)
    deadline = time.monotonic() + GREEN_S
    while shards_on(via, leaving.name) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not shards_on(via, leaving.name), f"{leaving.name} still holds {shards_on(via, leaving.name)}"
    assert leaving.stop() in (0, 143), leaving.tail_log()
    cluster.nodes.remove(leaving)
    exclude(via, None)
    load.green(via, nodes=3)
    load.step(f"{leaving.name} removed", started)

    started = time.monotonic()
    replaced = cluster.nodes[0]
    replaced.kill()
    shutil.rmtree(replaced.data)
    replaced.data.mkdir(parents=True)
    replaced.start()
    replaced.wait_until_ready(timeout=GREEN_S)
    load.green(replaced, nodes=3)
    load.step(f"{replaced.name} replaced by an empty node of its name", started)

    started = time.monotonic()
    for node in cluster.nodes:
        node.kill()
    for node in cluster.nodes:
        node.start()
    for node in cluster.nodes:
        node.wait_until_ready(timeout=GREEN_S)
    load.green(cluster.nodes[0], nodes=3)
    load.step("every node killed -9 at once", started)

    load.finish()
