"""Issue 28, what snapshots do with `.locks` (docs/OPERATIONS.md "Snapshots and `.locks`"): one node with a
shared-file-system repository. `.locks` is a system index of the feature `lock_manager`: a
snapshot takes it as that feature's state, never by index name, and holds none of its locks —
they live in each copy's state log (`<shard>/_state/locks-batches.log`), outside the Lucene
files a snapshot copies. A restore brings it back only as a feature state; restoring that
drops the locks held at the time and puts the partition in recovery grace (the restored index
has a higher primary term and no state log), and a lock held when the snapshot was taken does
not come back. The restore test runs last: its node stays in grace."""

from __future__ import annotations

import pytest

import node as esnode
from cluster_kit import OneNode
from lockclient import LockClient, assert_error, ok, unique, wait_until

CLUSTER = "eslm-it-snapshot"
REPO = esnode.cluster_home(CLUSTER) / "node-0" / "repo"  # under the node's folder: the node's user may write it
METADATA = {"filter_path": "metadata.indices.*.primary_terms,metadata.indices.*.settings.index.uuid"}


ONE_NODE = OneNode(CLUSTER, {"path.repo": str(REPO)})


@pytest.fixture(scope="module", autouse=True)
def repository(own_node):
    """The snapshot repository `repo`, registered once for the module."""
    client = LockClient(own_node.url)
    ok(client.call("PUT", "/_snapshot/repo", {"type": "fs", "settings": {"location": str(REPO / "repo")}}))
    client.close()


def snapshot(lc, name: str, body: dict | None = None):
    return lc.call("PUT", f"/_snapshot/repo/{name}", body, params={"wait_for_completion": "true"})


def lock_index(lc) -> dict:
    """`.locks`'s uuid and primary terms, from the cluster state."""
    meta = ok(lc.call("GET", "/_cluster/state/metadata/.locks", params=METADATA))["metadata"]["indices"][".locks"]
    return {"uuid": meta["settings"]["index"]["uuid"], "terms": meta["primary_terms"]}


def test_a_snapshot_takes_the_lock_index_as_a_feature_state_without_its_locks(lc):
    key = unique()
    ok(lc.acquire(key, "held-at-snapshot", lease="1m"))
    everything = ok(snapshot(lc, unique("all")))["snapshot"]
    assert everything["include_global_state"] is True
    assert {"feature_name": "lock_manager", "indices": [".locks"]} in everything["feature_states"]
    assert ".locks" in everything["indices"]

    # The state log's header ("ESLMLOG\n", cluster.StateLogFile) is in no file of the repository.
    assert not [p for p in REPO.rglob("*") if p.is_file() and b"ESLMLOG" in p.read_bytes()]
    ok(lc.release(key, "held-at-snapshot"))


def test_index_patterns_never_take_the_lock_index_and_feature_states_none_leaves_it_out(lc):
    by_pattern = ok(snapshot(lc, unique("pattern"), {"indices": "*", "include_global_state": False}))["snapshot"]
    assert ".locks" not in by_pattern["indices"] and by_pattern["feature_states"] == []

    without = ok(snapshot(lc, unique("none"), {"feature_states": ["none"]}))["snapshot"]
    assert ".locks" not in without["indices"] and without["feature_states"] == []

    assert_error(snapshot(lc, unique("named"), {"indices": ".locks", "include_global_state": False}),
                 400, "illegal_argument_exception", "system indices [.locks]", "feature_states")


def test_a_restore_takes_the_lock_index_only_as_a_feature_state_which_drops_every_lock_into_grace(lc):
    key = unique()
    ok(lc.acquire(key, "held-at-snapshot", lease="1m"))
    name = unique("restore")
    ok(snapshot(lc, name))
    ok(lc.release(key, "held-at-snapshot"))
    ok(lc.acquire(key, "held-now", lease="1m"))
    before = lock_index(lc)

    assert_error(lc.call("POST", f"/_snapshot/repo/{name}/_restore",
                         {"indices": ".locks", "include_global_state": False}),
                 400, "illegal_argument_exception", "system indices [.locks]", "feature state")
    # Restoring indices by pattern and without feature states leaves the lock index alone.
    ok(lc.call("POST", f"/_snapshot/repo/{name}/_restore", {"indices": "*", "include_global_state": False},
               params={"wait_for_completion": "true"}))
    assert lock_index(lc) == before

    # The feature state replaces the index: another uuid, and a primary term one above the
    # snapshot's, here above the running one's. The partition then reopens empty in recovery grace:
    # the lock held now is gone and nothing is granted until locks.recovery.grace has passed.
    restored = ok(lc.call("POST", f"/_snapshot/repo/{name}/_restore",
                          {"indices": "-*", "include_global_state": False, "feature_states": ["lock_manager"]},
                          params={"wait_for_completion": "true"}))
    assert restored["snapshot"]["indices"] == [".locks"]
    ok(lc.call("GET", "/_cluster/health/.locks", params={"wait_for_status": "green", "timeout": "60s"}))
    after = lock_index(lc)
    assert after["uuid"] != before["uuid"] and after["terms"]["0"] > before["terms"]["0"], (before, after)

    def reopened():
        parts = ok(lc.diagnostics())["core"]["partitions"]
        return parts if parts and parts[0]["epoch"] == after["terms"]["0"] else None

    (partition,) = wait_until(reopened, 30, interval=0.2, message="the partition reopened in the new term")
    assert partition["state"] == "grace" and partition["held"] == 0, partition
    assert lc.state(key)["holders"] == [], "neither the lock held at the snapshot nor the one held now"
    assert_error(lc.release(key, "held-now"), 404, "lock_not_held_exception")
    err = assert_error(lc.acquire(key, "next"), 503, "lock_partition_unavailable_exception", "recovery grace")
    assert int(err["retry_after_ms"]) > 0, err
