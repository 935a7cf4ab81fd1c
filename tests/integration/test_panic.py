"""A panic in the Rust core fails only its request (issue 13; docs/RELIABILITY.md "A panic in the
core"): 500 `lock_core_panic_exception` naming the partition, the node stays up, and the
partition is closed and reopened from its replicated state in a higher epoch, with its holders.

The panic is the test-only fault of the `fault-injection` plugin zip (`make java-test` builds it
beside the release zip): an acquire of PANIC_KEY panics inside the partition's mutex. Real nodes,
HTTP only."""

from __future__ import annotations

import zipfile

import pytest
import requests

from cluster_kit import OneNode, ThreeNodes, http, owner_of_partition
from lockclient import LockClient, assert_error, ok, unique, wait_until

import node as esnode

PANIC_KEY = "eslm-fault-injection-panic"
VARIANT = "fault-injection"
LIBRARY = "native/linux-x86_64/libeslm.so"
EPOCH_SHIFT = 40  # a fencing token is epoch << 40 | counter (docs/API.md "Fencing tokens")


def library_of(zip_path) -> bytes:
    with zipfile.ZipFile(zip_path) as z:
        return z.read(LIBRARY)


def test_the_release_library_does_not_contain_the_fault():
    version = esnode.es_version()
    assert PANIC_KEY.encode() not in library_of(esnode.plugin_zip(version))
    # The same search finds it where it is compiled in: the check above can fail.
    assert PANIC_KEY.encode() in library_of(esnode.plugin_zip(version, VARIANT))


# Each test panics its nodes: `fresh_node` (no replica of `.locks`) and `fresh_cluster` (two nodes,
# a replica), with the fault-injection plugin.
ONE_NODE = OneNode("eslm-it-panic", variant=VARIANT)
THREE_NODES = ThreeNodes("eslm-it-panic-pair", variant=VARIANT, size=2)


def hold_some(lc: LockClient, n: int = 3) -> list[tuple[str, str, int]]:
    """`n` fresh locks with long leases, as (key, owner, fencing_token)."""
    held = []
    for _ in range(n):
        key, owner = unique("held"), unique("owner")
        held.append((key, owner, ok(lc.acquire(key, owner, lease="5m"))["fencing_token"]))
    return held


def panic_once(lc: LockClient) -> dict:
    """The panicking acquire: exactly 500 `lock_core_panic_exception`, naming partition 0."""
    r = lc.acquire(PANIC_KEY, unique("crasher"))
    err = assert_error(r, 500, "lock_core_panic_exception")
    assert r.status_code == 500 and err["type"] == "lock_core_panic_exception", r.text
    assert err.get("partition") == "0", r.text
    assert "panicked" in err["reason"], r.text
    return err


def serving_again(lc: LockClient, key: str, timeout: float = 120.0) -> dict:
    """Polls a read of `key` (partition 0) until it answers 200 again."""
    def probe():
        try:
            r = lc.get(key)
        except requests.RequestException:
            return None
        return r.json() if r.status_code == 200 else None
    return wait_until(probe, timeout=timeout, interval=0.2, message="partition 0 serving again")


def assert_holders_carried_on(lc: LockClient, held: list[tuple[str, str, int]]) -> None:
    """Every earlier holder still holds, renews and releases with its token; a new grant's token
    is above every earlier one (a higher epoch)."""
    tokens = [token for _, _, token in held]
    for key, owner, _ in held:
        assert lc.holders(key) == [owner], (key, lc.state(key))
    for key, owner, token in held:
        assert ok(lc.renew(key, owner, fencing_token=token, lease="1m"))["fencing_token"] == token
    new = ok(lc.acquire(unique("after"), unique("owner")))
    assert new["fencing_token"] > max(tokens), (new, tokens)
    assert new["fencing_token"] >> EPOCH_SHIFT > max(tokens) >> EPOCH_SHIFT, (new, tokens)
    for key, owner, token in held:
        assert ok(lc.release(key, owner, fencing_token=token))["released"] is True
        assert lc.holders(key) == []


def assert_logged_panic_and_no_fatal_error(node) -> None:
    log = node.log_file.read_text(errors="replace")
    at = log.find("lock core panic: panicked at")
    assert at >= 0, node.tail_log()
    assert "backtrace:" in log[at:at + 2000] and "fault" in log[at:at + 20000], log[at:at + 2000]
    assert "fatal error" not in log, "an Error reached an Elasticsearch thread"
    assert node.process is not None and node.process.poll() is None, "the node died"


def test_one_node_answers_500_and_reopens_the_partition_from_its_own_log(fresh_node):
    lc = LockClient(fresh_node.url)
    try:
        held = hold_some(lc)
        before = ok(lc.diagnostics())["core"]["partitions"][0]["epoch"]
        panic_once(lc)
        assert ok(lc.diagnostics())["node"], "the node still answers"
        serving_again(lc, held[0][0])
        assert_holders_carried_on(lc, held)
        after = ok(lc.diagnostics())["core"]["partitions"]
        assert [(p["id"], p["state"]) for p in after] == [(0, "active")], after
        assert after[0]["epoch"] > before, (before, after)
        assert_logged_panic_and_no_fatal_error(fresh_node)
    finally:
        lc.close()


@pytest.mark.slow
def test_two_nodes_promote_the_replica_with_the_holders(fresh_cluster):
    owner, epoch = owner_of_partition(fresh_cluster)
    other = next(n for n in fresh_cluster.nodes if n is not owner)
    lc = LockClient(other.url)  # the coordinator is not the owner: the 500 crosses the transport
    try:
        held = hold_some(lc)
        panic_once(lc)
        assert http(owner, "GET", "/_locks/_node/diagnostics").status_code == 200, "the owner still answers"
        serving_again(lc, held[0][0])
        new_owner, new_epoch = owner_of_partition(fresh_cluster)
        assert new_epoch > epoch and new_owner is other, (owner.name, epoch, new_owner.name, new_epoch)
        assert_holders_carried_on(lc, held)
        assert_logged_panic_and_no_fatal_error(owner)
        # The failed copy comes back as the replica.
        health = http(other, "GET", "/_cluster/health/.locks?wait_for_status=green&timeout=120s", timeout=130)
        assert health.status_code == 200 and health.json()["status"] == "green", health.text
    finally:
        lc.close()
