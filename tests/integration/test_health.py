"""What operators watch (docs/API.md "Health", "GET /_locks/_diagnostics", "GET /_locks/_stats"),
on real nodes over HTTP: the `lock_partitions` indicator of `GET _health_report` on one node and
on a three-node cluster whose lock partition loses its replica, then its only copy, and gets
them back; the cluster-wide diagnostics call, a node that does not answer reported in it; and the
windowed `_stats` percentiles. Nothing here differs between the supported Elasticsearch versions
(the health API a plugin extends is the same in 8.19 and 9.x; the one-node tests pass on both),
so the module runs on the default version only (pytest.ini, `every_version`)."""

from __future__ import annotations

import time

import pytest
import requests

from cluster_kit import FAST_FAULT_DETECTION, OneNode, ThreeNodes, http, live
from lockclient import LockClient, ok, unique, wait_until

INDICATOR = "/_health_report/lock_partitions"


def indicator(node_url: str) -> dict:
    r = requests.get(node_url + INDICATOR, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()["indicators"]["lock_partitions"]


def wait_for_indicator(node_url: str, pred, what: str, timeout: float = 90) -> dict:
    """Asks the indicator until `pred` holds for it (the owners' reports arrive within a second
    of the first ask, docs/API.md "Health"); fails naming `what` and the last answer."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = indicator(node_url)
        except (requests.RequestException, AssertionError) as e:
            last = repr(e)
        else:
            if pred(last):
                return last
        time.sleep(0.3)
    raise AssertionError(f"indicator never {what} within {timeout}s; last: {last}")


def green(ind) -> bool:
    return ind["status"] == "green"


def diagnosis_ids(ind) -> set[str]:
    """The diagnoses' own ids (the API shows `elasticsearch:health:lock_partitions:diagnosis:<id>`)."""
    prefix = "elasticsearch:health:lock_partitions:diagnosis:"
    assert all(d["id"].startswith(prefix) for d in ind.get("diagnosis", [])), ind
    return {d["id"][len(prefix):] for d in ind.get("diagnosis", [])}


def impact_ids(ind) -> list[str]:
    """The impacts' own ids (the API shows `elasticsearch:health:lock_partitions:impact:<id>`)."""
    prefix = "elasticsearch:health:lock_partitions:impact:"
    assert all(i["id"].startswith(prefix) for i in ind.get("impacts", [])), ind
    return [i["id"][len(prefix):] for i in ind.get("impacts", [])]


# --- one node ---------------------------------------------------------------------------------

def test_a_single_node_is_green_with_the_indicator_in_the_full_report(single_node):
    ind = wait_for_indicator(single_node.url, green, "green")
    assert ind["symptom"] in ("The lock partition is available.",) or ind["symptom"].startswith("All "), ind
    d = ind["details"]
    assert d["partitions"] >= 1 and d["durability"] == "replicated", d
    for finding in ("unavailable", "not_open", "unconfirmed", "in_grace", "without_replica", "not_reporting"):
        assert d[finding] == 0 and d[f"{finding}_partitions"] == [], (finding, d)
    assert "impacts" not in ind and "diagnosis" not in ind, "green: nothing to do"

    full = requests.get(single_node.url + "/_health_report", timeout=30).json()
    assert full["indicators"]["lock_partitions"]["status"] == "green", full
    brief = requests.get(single_node.url + INDICATOR + "?verbose=false", timeout=30).json()
    assert "details" not in brief["indicators"]["lock_partitions"], brief


def test_cluster_diagnostics_on_a_single_node(single_node):
    body = ok(requests.get(single_node.url + "/_locks/_diagnostics", timeout=30))
    assert body["_nodes"] == {"total": 1, "successful": 1, "failed": 0}, body["_nodes"]
    ((node_id, node),) = body["nodes"].items()
    local = ok(requests.get(single_node.url + "/_locks/_node/diagnostics", timeout=30))
    assert node_id == local["node"]["id"] and node["node"] == local["node"]
    assert node["plugin"] == local["plugin"] and node["settings"] == local["settings"]
    (p,) = node["core"]["partitions"]
    assert p["state"] == "active" and p["grace_left_ms"] == 0 and p["confirmed"] is True, p
    only = ok(requests.get(single_node.url + "/_locks/_diagnostics/_local", timeout=30))
    assert list(only["nodes"]) == [node_id]


def test_stats_percentiles_cover_the_recent_window(single_node):
    locks = LockClient(single_node.url)
    try:
        before = ok(locks.stats())["total"]["hold_time_ms"]
        k, me = unique(), unique("owner")
        ok(locks.acquire(k, me))
        time.sleep(0.25)  # the hold time measured, not a wait for a condition
        ok(locks.release(k, me))
        after = ok(locks.stats())["total"]["hold_time_ms"]
    finally:
        locks.close()
    assert after["count"] == before["count"] + 1, (before, after)
    assert after["window_count"] == before["window_count"] + 1, (before, after)
    assert after["count"] >= after["window_count"], after
    # A hold of at least 250 ms is in the window: its max is at least that, and the percentiles
    # never exceed the window's max.
    assert after["max"] >= 250, after
    assert after["p50"] <= after["p90"] <= after["p99"] <= after["max"], after


GRACE_S = 25


# A node of its own with `locks.durability: memory` and a short recovery grace: a restart brings
# its partition back empty, in grace (docs/ARCHITECTURE.md "Durability modes").
ONE_NODE = OneNode("eslm-it-health-memory", {
    "locks.durability": "memory", "locks.lease.max": "10s", "locks.lease.default": "5s",
    "locks.recovery.grace": f"{GRACE_S}s"})


def test_a_partition_in_recovery_grace_is_yellow_until_the_grace_ends(own_node):
    wait_for_indicator(own_node.url, green, "green before the restart")
    assert own_node.stop() in (0, 143), own_node.tail_log()
    own_node.start()
    own_node.wait_until_ready()
    ind = wait_for_indicator(own_node.url, lambda i: i["status"] != "green" and i["details"]["in_grace"] == 1,
                             "in grace after the restart", timeout=GRACE_S)
    assert ind["status"] == "yellow" and ind["details"]["in_grace_partitions"] == [0], ind
    assert 0 < ind["details"]["grace_left_ms"]["0"] <= GRACE_S * 1000, ind
    assert ind["details"]["durability"] == "memory" and ind["details"]["without_replica"] == 0, ind
    assert diagnosis_ids(ind) == {"recovery_grace"}, ind
    assert impact_ids(ind) == ["lock_grants_paused"], ind
    r = requests.post(own_node.url + f"/_locks/{unique()}/_acquire", json={"owner": unique("o")}, timeout=30)
    assert r.status_code == 503, f"the indicator says what clients see: {r.status_code} {r.text}"
    wait_for_indicator(own_node.url, green, "green once the grace ended", timeout=GRACE_S + 30)


# --- three nodes --------------------------------------------------------------------------------

THREE_NODES = ThreeNodes("eslm-it-health", FAST_FAULT_DETECTION)


def copies(via) -> dict[str, str]:
    """{"p": node name of partition 0's primary, "r": of its replica} from `_cat/shards`."""
    rows = http(via, "GET", "/_cat/shards/.locks?format=json&h=shard,prirep,state,node").json()
    return {row["prirep"]: row["node"] for row in rows if row["shard"] == "0" and row["state"] == "STARTED"}


def started_copies(via) -> dict[str, str] | None:
    """`copies(via)` once both the primary and the replica are started, else None."""
    now = copies(via)
    return now if {"p", "r"} <= set(now) else None


def set_allocation(via, value):
    r = http(via, "PUT", "/_cluster/settings", {"persistent": {"cluster.routing.allocation.enable": value}})
    assert r.status_code == 200, r.text


def wait_for_nodes(via, n):
    r = http(via, "GET", f"/_cluster/health?wait_for_nodes={n}&timeout=120s", timeout=130)
    assert r.status_code == 200 and r.json()["number_of_nodes"] == n, r.text


@pytest.mark.slow
def test_the_indicator_follows_a_partition_losing_and_regaining_its_copies(cluster):
    """Replica allocation off, so that each state lasts until the test ends it: the replica's node
    killed -> yellow, no replica; a lock taken (its copy becomes stale), that node back and the
    primary's node killed -> red, no owner, and lock requests answer 503; the primary's node back
    -> yellow, the holder kept; allocation on -> green."""
    a, b, c = cluster.nodes
    wait_for_indicator(c.url, green, "green at the start")
    # Green counts a relocating copy (the plugin keeps copies off the master): both started first.
    held = wait_until(lambda: started_copies(c), 60, 0.2, message="primary and replica started")
    primary, replica = cluster.node(held["p"]), cluster.node(held["r"])
    via = next(n for n in cluster.nodes if n is not primary and n is not replica)
    set_allocation(via, "primaries")
    try:
        replica.kill()
        # Right after a node leaves, the owner may for a moment be one the master has not confirmed
        # (also yellow, grants paused; longer on a loaded machine): wait for the replica alone.
        ind = wait_for_indicator(via.url, lambda i: i["status"] == "yellow" and i["details"]["unconfirmed"] == 0,
                                 "yellow without the replica, its owner confirmed")
        assert ind["details"]["without_replica_partitions"] == [0], ind
        assert ind["details"]["unavailable"] == 0, ind
        assert "partition_without_replica" in diagnosis_ids(ind), ind
        assert impact_ids(ind) == ["lock_partitions_at_risk"], ind
        assert "replica" in ind["symptom"], ind
        for d in ind["diagnosis"]:
            assert d["cause"] and d["action"] and d["help_url"], d
            assert d["affected_resources"]["indices"] == [".locks"], d
        # A change while the replica is away: the primary has the master mark that copy stale, so
        # it cannot become the primary later (Elasticsearch's in-sync copies).
        k, me = unique(), unique("owner")
        held_token = ok(http(via, "POST", f"/_locks/{k}/_acquire", {"owner": me, "acquisition": me, "lease": "10m"}))["fencing_token"]

        replica.start()
        replica.wait_until_ready()
        wait_for_nodes(via, 3)
        primary.kill()
        ind = wait_for_indicator(via.url, lambda i: i["status"] == "red", "red without an owner")
        assert ind["details"]["unavailable_partitions"] == [0], ind
        assert "partition_unassigned" in diagnosis_ids(ind), ind
        assert "lock_requests_refused" in impact_ids(ind), ind
        r = http(via, "POST", f"/_locks/{unique()}/_acquire", {"owner": unique("o")}, timeout=60)
        assert r.status_code == 503, f"the indicator says what clients see: {r.status_code} {r.text}"

        primary.start()
        primary.wait_until_ready()
        ind = wait_for_indicator(via.url, lambda i: i["status"] == "yellow", "yellow once the primary is back")
        assert ind["details"]["unavailable"] == 0 and ind["details"]["without_replica_partitions"] == [0], ind
        holders = ok(http(via, "GET", f"/_locks/{k}"))["holders"]
        assert [(h["owner"], h["fencing_token"]) for h in holders] == [(me, held_token)], holders
    finally:
        set_allocation(via, None)
    wait_for_indicator(via.url, green, "green after recovery")


@pytest.mark.slow
def test_cluster_diagnostics_report_a_node_that_does_not_answer(cluster):
    """Every node's diagnostics in one call; a frozen node is reported under `_nodes.failures`
    once the cluster gives up on it, not left out."""
    for n in cluster.nodes:
        if n.process is None or n.process.poll() is not None:
            n.start()
            n.wait_until_ready()
    via = cluster.nodes[0]
    wait_for_nodes(via, 3)
    body = ok(http(via, "GET", "/_locks/_diagnostics"))
    assert body["_nodes"] == {"total": 3, "successful": 3, "failed": 0}, body["_nodes"]
    assert sorted(n["node"]["name"] for n in body["nodes"].values()) == sorted(n.name for n in cluster.nodes)

    frozen = cluster.nodes[2] if cluster.nodes[2] is not via else cluster.nodes[1]
    frozen_id = next(i for i, n in body["nodes"].items() if n["node"]["name"] == frozen.name)
    assert frozen.freeze()
    try:
        body = ok(http(via, "GET", "/_locks/_diagnostics", timeout=120))
    finally:
        frozen.thaw()
    assert body["_nodes"]["failed"] == 1 and body["_nodes"]["successful"] == 2, body["_nodes"]
    (failure,) = body["_nodes"]["failures"]
    assert frozen_id in str(failure), failure
    assert frozen_id not in body["nodes"]
    wait_for_nodes(via, 3)
    assert len(live(cluster)) == 3
