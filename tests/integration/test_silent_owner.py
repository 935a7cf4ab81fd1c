"""A silent owner replaced in seconds (docs/ARCHITECTURE.md "Silent owners"), on a real three-node
cluster with default settings (one lock partition, replicated; Elasticsearch's own fault
detection untouched, so it would take 30 s and more to remove a frozen node).

The owner of partition 0, not the elected master, is frozen with SIGSTOP (a GC pause, a stalled
VM). The master has heard none of its ownership checks for `locks.failover.silent_owner` (3.5 s)
and fails its primary copy, so the in-sync replica takes over with every holder. The tests
check, over what the clients saw:

- a fresh key is granted by the new owner, in a higher epoch, while the old owner is still frozen,
  through the third node and through the master (which routes to the copy it promotes before its
  own state shows the promotion);
- a holder from before the freeze keeps its lock and token, and renews through the new owner;
- once resumed, the old owner grants nothing of the keys the new owner serves;
- pauses shorter than the bound (1 s, and 2.5 s, which is just under it counted from the owner's
  last check) fail nothing over; pauses around it (3.5, 4, 4.5 s: resumed just before or just
  after the failover) keep every holder and one owner;
- a bound that would let two owners serve is refused, naming the setting.

The cluster is started by scripts/node.py (plugin installed with `elasticsearch-plugin
install`) and the tests talk HTTP only."""

from __future__ import annotations

import time
import uuid

import pytest
import requests

from cluster_kit import (
    first_grant_while_frozen,
    RenewRecorder,
    holders_of,
    http,
    current_master,
    live,
    no_rebalancing,
    owner_of_partition,
    owner_that_is_not_the_master,
    settled,
    take,
    ThreeNodes,
)
from lockclient import wait_until

pytestmark = pytest.mark.slow

SILENT_OWNER_S = 3.5  # locks.failover.silent_owner's default
FROZEN_S = 25  # well inside Elasticsearch's own 30 s follower-check removal


THREE_NODES = ThreeNodes("eslm-it-silent-owner", {"cluster.routing.rebalance.enable": "none"})


def copies_off_the_master(node):
    """Waits until no copy of a lock partition sits on the elected master and none moves; answers
    (master name, {node name: "p"|"r"})."""
    def placed():
        settled(node)
        master = current_master(node)
        if master is None:
            return None
        shards = http(node, "GET", "/_cat/shards/.locks?format=json&h=shard,prirep,node,state").json()
        if any(s["state"] != "STARTED" for s in shards) or any(s["node"] == master for s in shards):
            return None
        return master, {s["node"]: s["prirep"] for s in shards}
    return wait_until(placed, 90, 0.2, message="the lock copies left the elected master")


def epoch_of(node):
    """Partition 0's epoch as the cluster's metadata says (its primary term)."""
    r = http(node, "GET", "/_cluster/state/metadata/.locks?filter_path=metadata.indices.*.primary_terms")
    assert r.status_code == 200, r.text
    (index,) = r.json()["metadata"]["indices"].values()
    return int(index["primary_terms"]["0"])


def green(node):
    r = http(node, "GET", "/_cluster/health/.locks?wait_for_nodes=3&wait_for_status=green&timeout=120s",
             timeout=130)
    assert r.status_code == 200 and not r.json()["timed_out"], r.text


def test_a_frozen_owner_is_replaced_in_seconds_and_every_holder_kept(cluster):
    with no_rebalancing(cluster):
        owner, epoch, master = owner_that_is_not_the_master(cluster)
        settled(owner)
        via = next(n for n in live(cluster) if n is not owner and n is not master)
        held, asked = f"silent-held-{uuid.uuid4().hex[:6]}", f"silent-asked-{uuid.uuid4().hex[:6]}"
        token = take(via, held, "holder", lease="2m")
        with RenewRecorder(master, held, "holder") as renewals:
            assert owner.freeze()
            frozen_at = time.monotonic()
            try:
                grant, after_s = first_grant_while_frozen(via, asked, frozen_at, FROZEN_S - 6)
                renewed_while_frozen = len([s for s in renewals.statuses if s == 200])
                still_frozen = time.monotonic() - frozen_at < FROZEN_S
            finally:
                owner.thaw()
            print(f"\nthe owner frozen: a fresh key granted by the new owner after {after_s:.2f}s")
            assert still_frozen
            assert grant["fencing_token"] >> 40 > epoch, "granted in a higher epoch by the new owner"
            assert holders_of(via, held) == [("holder", token)], "the holder from before the freeze kept its token"
            wait_until(lambda: len([s for s in renewals.statuses if s == 200]) > renewed_while_frozen + 3, 30,
                       message="the holder renews through the new owner")
            # The resumed old owner, with its stale cluster state until it applies the new one: it
            # grants none of the keys the new owner holds, however often it is asked.
            answered, granted = 0, []
            until = time.monotonic() + 6
            while time.monotonic() < until:
                for k in (held, asked):
                    try:
                        r = http(owner, "POST", f"/_locks/{k}/_acquire", {"owner": "intruder", "acquisition": "intruder"}, timeout=15)
                    except requests.RequestException:
                        continue
                    answered += 1
                    if r.status_code == 200:
                        granted.append((k, r.json()))
                    else:
                        assert r.status_code in (409, 503), r.text
            assert answered > 0, "the resumed old owner answered no probe: the test proved nothing"
            assert granted == [], f"the resumed old owner granted a key the new owner serves: {granted}"
        refused = [s for s in renewals.statuses if s != 200 and not (isinstance(s, tuple) and s[0] == 503)]
        assert refused == [], f"a renewal of the holder was refused, not just delayed: {refused[:3]}"
        assert holders_of(via, held) == [("holder", token)]
        assert holders_of(via, asked) == [("during-freeze", grant["fencing_token"])]
        for k, who in ((held, "holder"), (asked, "during-freeze")):
            assert http(via, "POST", f"/_locks/{k}/_release", {"owner": who, "acquisition": who}).status_code == 200
        green(via)


def test_through_the_master_a_frozen_owner_is_replaced_as_fast(cluster):
    """The same freeze, asked through the elected master only. The master applies the state that
    fails the frozen owner over last, once every follower has it or `cluster.publish.timeout` (30 s)
    ran out, and the frozen node never answers; until then its own state names the old owner. It
    routes to the copy it is promoting meanwhile (docs/ARCHITECTURE.md "Silent owners"), so its
    clients get the new owner within the same seconds, while the old owner is still frozen."""
    with no_rebalancing(cluster):
        owner, epoch, master = owner_that_is_not_the_master(cluster)
        settled(owner)
        asked = f"silent-via-master-{uuid.uuid4().hex[:6]}"
        assert owner.freeze()
        frozen_at = time.monotonic()
        try:
            grant, after_s = first_grant_while_frozen(master, asked, frozen_at, FROZEN_S - 6)
        finally:
            owner.thaw()
        print(f"\nthe owner frozen: through the master, a fresh key granted after {after_s:.2f}s")
        assert grant["fencing_token"] >> 40 > epoch, "granted in a higher epoch by the new owner"
        assert http(master, "POST", f"/_locks/{asked}/_release",
                    {"owner": "during-freeze", "acquisition": "during-freeze"}).status_code == 200
        green(master)


@pytest.mark.parametrize("pause_s", [1.0, 2.5])
def test_a_pause_shorter_than_the_bound_fails_nothing_over(cluster, pause_s):
    """The owner is frozen for less than the bound (its last check before the freeze at most
    0.5 s earlier, so 2.5 s is just under 3.5 s of silence), then resumed: the same node serves the
    partition in the same epoch, checked after the bound and more has passed since the freeze."""
    with no_rebalancing(cluster):
        owner, epoch, _ = owner_that_is_not_the_master(cluster)
        settled(owner)
        assert owner.freeze()
        frozen_at = time.monotonic()
        try:
            time.sleep(pause_s)  # the fault itself: how long the node is frozen
        finally:
            owner.thaw()
        # Nothing to wait for but time: a failover would come within the bound plus the master's
        # look (0.25 s) and a publication.
        time.sleep(max(0.0, frozen_at + SILENT_OWNER_S + 4 - time.monotonic()))
        assert epoch_of(owner) == epoch, f"a {pause_s}s pause of the owner failed it over"
        assert owner_of_partition(cluster) == (owner, epoch)
        k = f"pause-{uuid.uuid4().hex[:6]}"
        take(owner, k, "after-pause")
        assert http(owner, "POST", f"/_locks/{k}/_release", {"owner": "after-pause", "acquisition": "after-pause"}).status_code == 200


@pytest.mark.parametrize("pause_s", [3.5, 4.0, 4.5])
def test_a_pause_around_the_bound_leaves_one_owner_and_every_holder(cluster, pause_s):
    """Frozen for about the bound (its last check 0 to 0.5 s before the freeze): the master may
    fail the owner over just before or just after the resume, or not at all. Whichever happened,
    the holder from before keeps its lock and token, one node serves the partition, and a key held
    through it is granted to nobody else through the resumed node."""
    with no_rebalancing(cluster):
        owner, epoch, _ = owner_that_is_not_the_master(cluster)
        settled(owner)
        via = next(n for n in live(cluster) if n is not owner)
        held = f"around-{uuid.uuid4().hex[:6]}"
        token = take(via, held, "holder", lease="2m")
        assert owner.freeze()
        try:
            time.sleep(pause_s)  # the fault itself: how long the node is frozen
        finally:
            owner.thaw()
        r = http(via, "POST", f"/_locks/{held}/_renew", {"owner": "holder", "acquisition": "holder"}, timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["fencing_token"] == token
        for _ in range(10):
            try:
                intr = http(owner, "POST", f"/_locks/{held}/_acquire", {"owner": "intruder", "acquisition": "intruder"}, timeout=15)
            except requests.RequestException:
                continue
            assert intr.status_code in (409, 503), f"granted through the resumed node: {intr.text}"
        new_owner, new_epoch = owner_of_partition(cluster)
        print(f"\nfrozen {pause_s}s: {'failed over' if new_epoch > epoch else 'kept its partition'}")
        assert holders_of(via, held) == [("holder", token)]
        assert http(via, "POST", f"/_locks/{held}/_release", {"owner": "holder", "acquisition": "holder"}).status_code == 200
        green(via)


def test_lock_copies_stay_off_the_master_and_leave_a_newly_elected_one(cluster):
    """With three nodes, neither copy of the partition sits on the elected master. An election that
    makes a node with a copy the master moves that copy off it (the primary by the planned
    hand-over): every holder keeps its token, renewals go on, the next token is larger."""
    node = cluster.nodes[0]
    master, copies = copies_off_the_master(node)
    assert len(copies) == 2 and master not in copies, copies
    owner = next(name for name, kind in copies.items() if kind == "p")
    via = next(n for n in live(cluster) if n.name != owner)
    held = f"elect-off-{uuid.uuid4().hex[:6]}"
    token = take(via, held, "holder", lease="2m")
    # The master excluded from voting: one of the two nodes with a copy is elected, and that copy
    # moves to the old master's node, the only one without a copy.
    with RenewRecorder(via, held, "holder") as renewals:
        r = http(via, "POST", f"/_cluster/voting_config_exclusions?node_names={master}&timeout=60s", timeout=70)
        assert r.status_code == 200, r.text
        try:
            new_master = wait_until(lambda: (m := current_master(via)) not in (None, master) and m, 60, 0.2,
                                    message="a new master")
            new_master_now, placed = copies_off_the_master(via)
            assert new_master_now == new_master and new_master not in placed, placed
        finally:
            r = http(via, "DELETE", "/_cluster/voting_config_exclusions?wait_for_removal=false")
            assert r.status_code == 200, r.text
    print(f"\nelection {master} -> {new_master}; copies {copies} -> {placed}")
    refused = [s for s in renewals.statuses if s != 200 and not (isinstance(s, tuple) and s[0] == 503)]
    assert renewals.statuses and refused == [], refused[:3]
    assert holders_of(via, held) == [("holder", token)]
    assert take(via, f"{held}-next", "next") > token
    for k, who in ((held, "holder"), (f"{held}-next", "next")):
        assert http(via, "POST", f"/_locks/{k}/_release", {"owner": who, "acquisition": who}).status_code == 200


def allocation_ids(node):
    """The allocation ids of partition 0's copies: a copy failed and rebuilt gets a new one."""
    r = http(node, "GET", "/_cluster/state/routing_table/.locks")
    assert r.status_code == 200, r.text
    (index,) = r.json()["routing_table"]["indices"].values()
    return sorted(c["allocation_id"]["id"] for c in index["shards"]["0"])


def test_a_one_second_pause_of_the_replicas_node_fails_no_copy(cluster):
    """The replica's node frozen for 1 s while the owner heartbeats: the owner waits 1.2 s for a
    copy that had its whole state (docs/ARCHITECTURE.md "Silent owners"), so the same copies serve
    afterwards (same allocation ids), nothing failed over, and the owner grants."""
    node = cluster.nodes[0]
    _, placed = copies_off_the_master(node)
    owner, epoch = owner_of_partition(cluster)
    replica = next(n for n in cluster.nodes if placed.get(n.name) == "r")
    before = allocation_ids(node)
    assert replica.freeze()
    try:
        time.sleep(1.0)  # the fault itself: how long the node is frozen
    finally:
        replica.thaw()
    k = f"replica-pause-{uuid.uuid4().hex[:6]}"
    take(owner, k, "after-pause")
    assert http(owner, "POST", f"/_locks/{k}/_release", {"owner": "after-pause", "acquisition": "after-pause"}).status_code == 200
    copies_off_the_master(node)
    assert allocation_ids(node) == before, "a copy was failed and rebuilt"
    assert epoch_of(node) == epoch and owner_of_partition(cluster) == (owner, epoch)


def test_a_bound_that_would_let_two_owners_serve_is_refused(cluster):
    node = cluster.nodes[0]
    for value in ("3s", "500ms"):
        r = http(node, "PUT", "/_cluster/settings", {"persistent": {"locks.failover.silent_owner": value}})
        assert r.status_code == 400, r.text
        assert "locks.failover.silent_owner" in r.text and "must be >= [3100ms]" in r.text, r.text
    r = http(node, "PUT", "/_cluster/settings", {"persistent": {"locks.failover.silent_owner": "10s"}})
    assert r.status_code == 200, r.text
    r = http(node, "PUT", "/_cluster/settings", {"persistent": {"locks.failover.silent_owner": None}})
    assert r.status_code == 200, r.text
