"""The default `locks.durability: replicated` on a real three-node cluster with default settings
(no shortened leases, grace or fault detection) and two lock partitions (docs/ARCHITECTURE.md
"Replication"): every change reaches every in-sync copy of the partition's shard before anyone
is told of it, so kill -9 of the owner, master elections, repeated partition moves and a full
cluster restart keep every holder and its token, and tokens only ever grow.

The cluster is started by scripts/node.py (plugin installed with `elasticsearch-plugin
install`) and the tests talk HTTP only."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import requests

import node as esnode
from cluster_kit import (
    ThreeNodes,
    COPIES_MAY_SIT_ON_THE_MASTER,
    RenewRecorder,
    assert_the_election_changed_nothing,
    granted_by_the_new_owner,
    hold_locks_before_an_election,
    holders_of,
    http,
    keys_in_partition,
    live,
    move_partition,
    native_bound_ms,
    no_rebalancing,
    owner_of_partition,
    owner_that_is_not_the_master,
    primary_term_in_state_of,
    rejoin,
    restart_all,
    served,
    settled,
    take,
    wait_for_new_master,
)
from lockclient import wait_until

pytestmark = pytest.mark.slow

FAILOVER_BOUND_S = 5  # kill -9 of the owner -> a key of its partition grantable again


# No rebalancing: the tests move partitions themselves (explicit reroutes, which still
# happen) and a balancer move racing a test's own fault is not what it is about.
THREE_NODES = ThreeNodes("eslm-it-replicated", {"locks.partitions": 2, "cluster.routing.rebalance.enable": "none",
                                               **COPIES_MAY_SIT_ON_THE_MASTER})


class Waiter:
    """One acquire that waits, sent in the background; `.response` once answered."""

    def __init__(self, node, key, owner, wait="120s"):
        self.response = None
        self.thread = threading.Thread(
            target=self._run, args=(node, key, {"owner": owner, "acquisition": owner, "wait": wait}), daemon=True)
        self.thread.start()

    def _run(self, node, key, body):
        try:
            self.response = http(node, "POST", f"/_locks/{key}/_acquire", body, timeout=300)
        except requests.RequestException as e:
            self.response = e

    def granted(self, timeout=120):
        self.thread.join(timeout)
        r = self.response
        assert isinstance(r, requests.Response) and r.status_code == 200, f"waiter got {r!r}: {getattr(r, 'text', '')}"
        return r.json()


def waiters_of(node, key, timeout=30):
    """The waiters of `key` once there are any (a re-queued waiter may take a moment)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        waiters = http(node, "GET", f"/_locks/{key}").json()["waiters"]
        if waiters:
            return [w["owner"] for w in waiters]
        time.sleep(0.05)
    raise AssertionError(f"no waiter on {key} within {timeout}s")


def test_every_partition_has_an_in_sync_replica_and_keys_spread_over_owners(cluster):
    """Two partitions, each with its primary and one replica (auto-expanded); keys of the two
    partitions are served by their partitions' owners."""
    health = http(cluster.nodes[0], "GET", "/_cluster/health/.locks").json()
    assert (health["active_primary_shards"], health["active_shards"]) == (2, 4), health
    node = cluster.nodes[0]
    for p in (0, 1):
        owner, epoch = owner_of_partition(cluster, p)
        (k,) = keys_in_partition(node, p, f"spread{p}", 1)
        token = take(node, k, "spread")
        assert token >> 40 == epoch
        assert http(node, "GET", f"/_locks/{k}").json()["holders"][0]["node"] == owner.name
        assert http(node, "POST", f"/_locks/{k}/_release", {"owner": "spread", "acquisition": "spread"}).status_code == 200
    # Each replica's node keeps a standby of its partition, ready to take it over.
    shards = http(node, "GET", "/_cat/shards/.locks?format=json&h=shard,prirep,node").json()
    for s in shards:
        diag = http(cluster.node(s["node"]), "GET", "/_locks/_node/diagnostics").json()
        if s["prirep"] == "r":
            assert int(s["shard"]) in diag["standbys"], (s, diag["standbys"])
            # its recovery waited for the primary's whole state, and says how long (< its 30 s bound)
            assert 0 <= diag["standby_recovery_waits_ms"][s["shard"]] < 30_000, diag["standby_recovery_waits_ms"]
        else:
            served = [p for p in diag["core"]["partitions"] if p["id"] == int(s["shard"])]
            assert [p["replicated"] for p in served] == [True], served
            # its batches' round trips: the whole state, then at least the grant and the release
            batches = served[0]["replication"]
            assert batches["batches"] >= 3, batches
            trip = batches["round_trip_ms"]
            assert 0 < trip["p50"] <= trip["p99"] <= trip["max"], batches


def test_a_key_lives_in_one_partition_and_keys_locked_together_share_a_hash_tag(cluster):
    """With several partitions a lock's partition follows from its key alone: `routing` is
    refused on locks (so one key can never be held in two partitions), keys of different
    partitions cannot be multi-locked, and keys with a common hash tag (`{tag}...`) share the
    tag's partition with a session created with `routing: tag`; ending the session frees them."""
    node = cluster.nodes[1]
    (k0,) = keys_in_partition(node, 0, "multi0", 1)
    (k1,) = keys_in_partition(node, 1, "multi1", 1)
    r = http(node, "POST", f"/_locks/{k0}/_acquire", {"owner": "tenant", "acquisition": "tenant", "routing": k1})
    assert r.status_code == 400 and r.json()["error"]["type"] == "illegal_argument_exception", r.text
    assert "[routing] is not accepted on a lock" in r.json()["error"]["reason"], r.text
    r = http(node, "POST", "/_locks/_acquire", {"owner": "tenant", "acquisition": "tenant", "locks": [{"key": k0}, {"key": k1}]})
    assert r.status_code == 400 and r.json()["error"]["type"] == "illegal_argument_exception", r.text
    assert "span lock partitions [" in r.json()["error"]["reason"], r.text
    assert "hash tag" in r.json()["error"]["reason"], r.text

    tag = k1  # a tag of partition 1, whatever partition the rest of each key hashes to
    keys = [f"{{{tag}}}items", f"{{{tag}}}payment"]
    s = http(node, "POST", "/_locks/_session", {"owner": "tenant", "ttl": "1m", "routing": tag})
    assert s.status_code == 200, s.text
    session = s.json()["session"]
    assert session.startswith("1_"), session
    r = http(node, "POST", "/_locks/_acquire", {
        "owner": "tenant", "acquisition": "tenant", "session": session, "locks": [{"key": k} for k in keys]})
    assert r.status_code == 200, r.text
    tokens = {lock["fencing_token"] for lock in r.json()["locks"]}
    assert len(tokens) == 1, "one grant, one token"
    listed = http(node, "GET", f"/_locks?prefix={{{tag}}}").json()["locks"]
    assert sorted((l["key"], l["partition"]) for l in listed) == [(k, 1) for k in keys], listed
    for n in live(cluster):
        for k in keys:
            info = http(n, "GET", f"/_locks/{k}").json()
            assert [h["owner"] for h in info["holders"]] == ["tenant"], info
    assert http(node, "POST", f"/_locks/_session/{session}/_keepalive", {"owner": "tenant"}).status_code == 200
    assert http(node, "DELETE", f"/_locks/_session/{session}", {"owner": "tenant"}).status_code == 200
    for k in keys:
        assert http(node, "GET", f"/_locks/{k}").json()["holders"] == []


def test_kill_9_of_the_owner_keeps_its_holders_and_serves_again_within_seconds(cluster):
    """kill -9 of partition 0's owner (not the master, as the allocator usually places it): its
    replica is promoted and serves the partition's keys again within FAILOVER_BOUND_S, with the
    holder still holding its token (renew and release through any survivor), a waiter queued
    before the kill granted when the holder releases, and every later token larger."""
    with no_rebalancing(cluster):
        owner, epoch, _ = owner_that_is_not_the_master(cluster)
        settled(owner)
        killed_owner_keeps_holders(cluster, owner, epoch)


def killed_owner_keeps_holders(cluster, owner, epoch):
    a, b = [n for n in live(cluster) if n is not owner]
    held, counted = keys_in_partition(a, 0, "kill", 2)
    tokens = [take(a, counted, "counter")]
    assert http(a, "POST", f"/_locks/{counted}/_release", {"owner": "counter", "acquisition": "counter"}).status_code == 200
    tokens.append(take(a, held, "holder", lease="2m"))
    s = http(a, "POST", "/_locks/_session", {"owner": "tenant", "ttl": "2m", "routing": held})
    assert s.status_code == 200, s.text
    session = s.json()["session"]
    assert session.startswith("0_"), session
    waiter = Waiter(b, held, "waiter")
    assert waiters_of(a, held) == ["waiter"]

    owner.kill()
    killed_at = time.monotonic()
    try:
        first = None
        while first is None:
            r = http(a, "POST", f"/_locks/{counted}/_acquire", {"owner": "after-kill", "acquisition": "after-kill"}, timeout=60)
            assert r.status_code in (200, 503), r.text
            first = r.json()["fencing_token"] if r.status_code == 200 else None
            assert time.monotonic() - killed_at < 60, "the partition never served again"
        failover_s = time.monotonic() - killed_at
        print(f"\nkill -9 of the owner: a key of its partition granted again after {failover_s:.2f}s")
        (esnode.BUILD / "kill9-failover-replicated.txt").open("a").write(f"{failover_s:.2f}\n")
        assert first >> 40 > epoch and first > max(tokens), "a new epoch: tokens above every earlier one"
        assert failover_s <= FAILOVER_BOUND_S, f"failover took {failover_s:.1f}s"

        for n in (a, b):
            assert holders_of(n, held) == [("holder", tokens[-1])], f"the holder survived the kill ({n.name})"
        # `who`, not `owner`: that name is the killed node, restarted in `finally`
        for n, verb, who in ((b, "_renew", "holder"), (a, "_release", "holder")):
            r = http(n, "POST", f"/_locks/{held}/{verb}", {"owner": who, "acquisition": who})
            assert r.status_code == 200, f"{verb} through {n.name}: {r.status_code} {r.text}"
        # The session came through the promotion under the same (secret) id, still owner-checked.
        r = http(b, "POST", f"/_locks/_session/{session}/_keepalive", {"owner": "intruder"})
        assert (r.status_code, r.json()["error"]["type"]) == (404, "session_not_found_exception"), r.text
        r = http(b, "POST", f"/_locks/_session/{session}/_keepalive", {"owner": "tenant"})
        assert r.status_code == 200 and r.json()["session"] == session, r.text
        r = http(a, "DELETE", f"/_locks/_session/{session}", {"owner": "tenant"})
        assert r.status_code == 200 and r.json()["ended"] is True, r.text
        granted = waiter.granted()
        assert granted["owner"] == "waiter" and granted["fencing_token"] > first, (granted, first)
        r = http(b, "POST", f"/_locks/{held}/_release", {"owner": "waiter", "acquisition": "waiter"})
        assert r.status_code == 200, r.text
    finally:
        rejoin(owner, a)


# Elasticsearch's `cluster.publish.timeout` (30 s by default): how long the master waits for every
# node to apply a cluster state before it answers the tasks in it. A frozen replica's copy must be
# dropped from the lock traffic well before that.
FROZEN_REPLICA_S = 25


def copies_of(via, partition) -> dict[str, str]:
    """{"p": node name of the partition's primary, "r": of its replica}, from `_cat/shards`: one
    of each, or the test's placement is not what it thinks."""
    rows = http(via, "GET", "/_cat/shards/.locks?format=json&h=shard,prirep,node").json()
    roles = [(row["prirep"], row["node"]) for row in rows if row["shard"] == str(partition)]
    assert sorted(role for role, _ in roles) == ["p", "r"], roles
    return dict(roles)


def reroute_move(via, partition, from_node, to_node):
    r = http(via, "POST", "/_cluster/reroute?metric=none", {"commands": [{"move": {
        "index": ".locks", "shard": partition, "from_node": from_node, "to_node": to_node}}]})
    assert r.status_code == 200, r.text
    settled(via)


def replica_on_a_node_that_is_neither_owner_nor_master(cluster, owner, master):
    """The node holding partition 0's replica, moved there first when it is on the master (a
    frozen master is an election, not what the test is about)."""
    replica = copies_of(owner, 0)["r"]
    if replica == master.name:
        [third] = [n for n in live(cluster) if n not in (owner, master)]
        reroute_move(owner, 0, master.name, third.name)
        replica = third.name
    return cluster.node(replica)


def partition_1_off(cluster, via, frozen):
    """Partition 1's copies moved off `frozen` (to the node holding none of them): the frozen node
    then holds a copy of partition 0 only."""
    copies = copies_of(via, 1)
    for role in ("p", "r"):
        if copies[role] == frozen.name:
            [free] = [n.name for n in live(cluster) if n.name not in copies.values()]
            reroute_move(via, 1, frozen.name, free)
            copies = copies_of(via, 1)
    assert frozen.name not in copies.values(), copies


def partition_1_replica_on(cluster, via, frozen):
    """Partition 1's primary moved to `via` (partition 0's owner) and its replica onto `frozen`,
    as the copies sit when they avoid the master (docs/ARCHITECTURE.md "Silent owners"): the frozen
    node then holds the replicas of both partitions, and each owner's batch times out on it. (An
    owner on the master itself applies the failure only when its publication ends.)"""
    for _ in range(4):
        copies = copies_of(via, 1)
        if copies == {"p": via.name, "r": frozen.name}:
            return
        [free] = [n.name for n in live(cluster) if n.name not in copies.values()]
        if copies["p"] != via.name and copies["r"] == via.name:
            reroute_move(via, 1, via.name, free)  # clears the way for the primary
        elif copies["p"] != via.name:
            reroute_move(via, 1, copies["p"], via.name)
        else:
            reroute_move(via, 1, copies["r"], frozen.name)
    assert copies_of(via, 1) == {"p": via.name, "r": frozen.name}


@pytest.mark.every_version  # the in-sync set is read through org.eslm.compat (pytest.ini)
@pytest.mark.parametrize("place_partition_1", [partition_1_off, partition_1_replica_on],
                         ids=["partition-1-elsewhere", "partition-1-replica-there-too"])
def test_a_frozen_replica_stops_the_lock_traffic_for_seconds_not_a_publication_timeout(cluster, place_partition_1):
    """The node holding partition 0's replica is frozen (SIGSTOP; neither owner nor master), with
    partition 1's copies elsewhere, or with partition 1's replica too. The owner's batch to it times
    out (1.2 s for a copy that had the whole state, 5 s for one still to get it) and the master fails
    the copy, with every other lock replica on that node, in one cluster-state update
    (docs/ARCHITECTURE.md "Silent owners"); it commits that at once, but answers only when every
    node applied it or its publication timed out (30 s, the frozen node never applies it). Each
    owner goes on as soon as it applied the committed state that takes its copy out of the in-sync
    set: a key of each partition is granted while the replica's node is still frozen (a failure of
    partition 1's copy asked separately would wait behind that publication, and miss the bound);
    the holder from before the freeze keeps its lock and token."""
    with no_rebalancing(cluster):
        owner, _, master = owner_that_is_not_the_master(cluster)
        settled(owner)
        frozen = replica_on_a_node_that_is_neither_owner_nor_master(cluster, owner, master)
        place_partition_1(cluster, owner, frozen)
        held, asked = keys_in_partition(owner, 0, "frozen-replica", 2)
        [asked_1] = keys_in_partition(owner, 1, "frozen-replica-1", 1)
        token = take(owner, held, "holder", lease="2m")
        assert frozen.freeze()
        frozen_at = time.monotonic()
        answers = []
        try:
            for key in (asked, asked_1):
                r = http(owner, "POST", f"/_locks/{key}/_acquire",
                         {"owner": "during-freeze", "acquisition": "during-freeze", "wait": f"{FROZEN_REPLICA_S}s"},
                         timeout=FROZEN_REPLICA_S + 10)
                answers.append((key, r, time.monotonic() - frozen_at))
        finally:
            frozen.thaw()
        for key, r, answered_s in answers:
            print(f"\nreplica's node frozen: {key} granted after {answered_s:.2f}s ({r.status_code})")
            assert r.status_code == 200, r.text
            assert answered_s < FROZEN_REPLICA_S, f"{key} granted only after {answered_s:.1f}s, once the replica's node could have resumed"
        assert holders_of(owner, held) == [("holder", token)]
        for k, who in ((held, "holder"), (asked, "during-freeze"), (asked_1, "during-freeze")):
            assert http(owner, "POST", f"/_locks/{k}/_release", {"owner": who, "acquisition": who}).status_code == 200
        r = http(owner, "GET", "/_cluster/health/.locks?wait_for_nodes=3&wait_for_status=green&timeout=120s",
                 timeout=130)
        assert r.status_code == 200 and not r.json()["timed_out"], r.text


def test_a_replica_frozen_past_the_silent_owner_bound_costs_its_live_owner_nothing(cluster):
    """The node holding partition 0's replica is frozen (neither owner nor master) for longer than
    the silent-owner bound after its copy's failure. The master commits that failure at once but
    applies it only when its publication ends (the frozen node never acknowledges it: up to
    `cluster.publish.timeout`), while the owner applied it and asks the master from that newer
    state every 500 ms. The master answers about the partitions its older state shows the asker
    holding in the same epoch, so the live owner is heard all along (docs/ARCHITECTURE.md "Silent
    owners"): it keeps granting through the freeze, and once the node resumes its primary term
    has not risen and the holder from before keeps its lock and token. A master that refused
    such a question failed the live owner's primary as silent once the publication ended (the
    term rose; the partition, its only in-sync copy failed, was reopened)."""
    with no_rebalancing(cluster):
        owner, epoch, master = owner_that_is_not_the_master(cluster)
        settled(owner)
        frozen = replica_on_a_node_that_is_neither_owner_nor_master(cluster, owner, master)
        partition_1_off(cluster, owner, frozen)
        held, *probes = keys_in_partition(owner, 0, "unheard", 80)
        token = take(owner, held, "holder", lease="5m")
        term = primary_term_in_state_of(master)
        assert term is not None
        # Just past the moment a master that does not hear the owner condemns it: the copy's
        # failure (a synced copy's wait), then the silent-owner bound and two of its looks.
        condemned_s = (native_bound_ms("SYNCED_COPY_WAIT_MS") + native_bound_ms("SILENT_OWNER_FAILOVER_DEFAULT_MS")
                       + 2 * native_bound_ms("SILENT_LOOK_INTERVAL_MS")) / 1000
        hold_s = condemned_s + 2
        granted = []
        assert frozen.freeze()
        frozen_at = time.monotonic()
        try:
            for key in probes:
                if time.monotonic() - frozen_at >= hold_s:
                    break
                take(owner, key, "probe", wait="10s")
                granted.append(time.monotonic() - frozen_at)
                assert http(owner, "POST", f"/_locks/{key}/_release", {"owner": "probe", "acquisition": "probe"}).status_code == 200
                time.sleep(0.1)
        finally:
            frozen.thaw()
        assert granted and granted[-1] > condemned_s, f"no grant after {condemned_s:.1f}s of the freeze: {granted}"
        print(f"\nreplica's node frozen {hold_s:.1f}s: {len(granted)} grants, the last {granted[-1]:.2f}s in")
        # Once the master has run what it queued during the publication (a silent owner's primary
        # failed, if it condemned one) and the cluster is green again.
        settled(owner)
        assert (primary_term_in_state_of(master), owner_of_partition(cluster)) == (term, (owner, epoch)), \
            "the live owner was failed over as silent"
        assert holders_of(owner, held) == [("holder", token)]
        assert http(owner, "POST", f"/_locks/{held}/_release", {"owner": "holder", "acquisition": "holder"}).status_code == 200


def test_a_lock_delay_survives_kill_9_of_the_owner(cluster):
    """A holder frozen past its lease (a GC pause): its lock-delay (docs/API.md "Lock-delay")
    started on the owner, then kill -9 of the owner: the promoted copy still keeps the key from
    other owners, and lets its owner take it back; a lock granted with a delay before the kill
    and force-released after it starts its delay on the new owner too."""
    with no_rebalancing(cluster):
        owner, _, _ = owner_that_is_not_the_master(cluster)
        settled(owner)
        a, b = [n for n in live(cluster) if n is not owner]
        paused, asked = keys_in_partition(a, 0, "delay", 2)
        before = take(a, paused, "paused", lease="1s", lock_delay="1m")
        take(a, asked, "asked", lease="2m", lock_delay="1m")
        wait_until(lambda: http(a, "GET", f"/_locks/{paused}").json().get("lock_delays"), 20,
                   message="the paused holder's lease ran out")
        owner.kill()
        try:
            state = wait_until(lambda: served(b, f"/_locks/{paused}"), 60, 0.1, message="served again")
            assert [d["owner"] for d in state["lock_delays"]] == ["paused"], state
            r = http(b, "POST", f"/_locks/{paused}/_acquire", {"owner": "next", "acquisition": "next"})
            assert r.status_code == 409, r.text
            error = r.json()["error"]
            assert error["type"] == "lock_conflict_exception" and int(error["retry_after_ms"]) > 10_000, error
            assert "lock-delay" in error["reason"], error
            assert take(b, paused, "paused") > before, "its owner takes it back, with a larger token"
            r = http(a, "POST", f"/_locks/{asked}/_force_release", {"reason": "its host is gone"})
            assert r.status_code == 200, r.text
            r = http(a, "POST", f"/_locks/{asked}/_acquire", {"owner": "next", "acquisition": "next"})
            assert r.status_code == 409 and "lock-delay" in r.json()["error"]["reason"], r.text
            assert http(a, "POST", f"/_locks/{paused}/_release", {"owner": "paused", "acquisition": "paused"}).status_code == 200
        finally:
            rejoin(owner, a)


def test_a_lowered_lease_maximum_never_shortens_a_running_lease_through_a_failover(cluster):
    """A 9-minute lease; `locks.lease.max` lowered to 30s; kill -9 of the owner: the promoted copy
    keeps the lease as granted (more than 8 minutes left, docs/ARCHITECTURE.md "Replication"),
    and for 40 s — past the lowered maximum — every newcomer is refused. The setting bounds new
    grants and renewals only: a renewal now gets at most 30s."""
    with no_rebalancing(cluster):
        owner, _, _ = owner_that_is_not_the_master(cluster)
        settled(owner)
        a, b = [n for n in live(cluster) if n is not owner]
        (k,) = keys_in_partition(a, 0, "lowered", 1)
        token = take(a, k, "holder", lease="9m")
        r = http(a, "PUT", "/_cluster/settings", {"persistent": {"locks.lease.max": "30s"}})
        assert r.status_code == 200, r.text
        try:
            owner.kill()
            state = wait_for(lambda: held_by(b, k, "holder", token), 60, "the holder served by the promoted copy")
            assert state["lease_ms"] > 8 * 60_000, f"the failover shortened the lease: {state}"
            refused_until = time.monotonic() + 40
            while time.monotonic() < refused_until:
                r = http(a, "POST", f"/_locks/{k}/_acquire", {"owner": "newcomer", "acquisition": "newcomer"})
                assert r.status_code == 409, f"a newcomer while the 9m lease runs: {r.status_code} {r.text}"
                time.sleep(2)  # the condition is time passing: 40 s of refusals, one every 2 s
            assert holders_of(b, k) == [("holder", token)]
            renewed = http(b, "POST", f"/_locks/{k}/_renew", {"owner": "holder", "acquisition": "holder"})
            assert renewed.status_code == 200 and renewed.json()["lease_ms"] <= 30_000, renewed.text
            assert http(a, "POST", f"/_locks/{k}/_release", {"owner": "holder", "acquisition": "holder"}).status_code == 200
        finally:
            r = http(a, "PUT", "/_cluster/settings", {"persistent": {"locks.lease.max": None}})
            assert r.status_code == 200, r.text
            rejoin(owner, a)


def held_by(node, key, who, token):
    """`key`'s holder entry through `node` once `who` holds it with `token` there, else None."""
    try:
        r = http(node, "GET", f"/_locks/{key}", timeout=10)
    except requests.RequestException:
        return None
    holders = r.json().get("holders", []) if r.status_code == 200 else []
    return next((h for h in holders if (h["owner"], h["fencing_token"]) == (who, token)), None)


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found is not None:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout}s")


def election_keys(node):
    return tuple(keys_in_partition(node, 0, "elect", 3))


def test_a_master_leaving_by_voting_exclusion_changes_nothing_for_the_locks(cluster):
    """What a rolling restart does: the elected master is excluded from voting and a new one is
    elected. Partition 0's owner (not the master) keeps its primary and term: no holder lost, no
    token reused, no 503 while the election happens."""

    def leave(owner, master):
        r = http(owner, "POST", f"/_cluster/voting_config_exclusions?node_names={master.name}")
        assert r.status_code == 200, r.text

    def come_back(owner, master):
        r = http(owner, "DELETE", "/_cluster/voting_config_exclusions?wait_for_removal=false")
        assert r.status_code == 200, r.text

    an_election_changes_nothing(cluster, leave, come_back)


def test_kill_9_of_the_master_changes_nothing_for_the_locks(cluster):
    """kill -9 of the elected master, which is not partition 0's owner: the same promises as a
    planned master change. The killed node is started again afterwards."""
    an_election_changes_nothing(
        cluster, lambda owner, master: master.kill(), lambda owner, master: rejoin(master, owner))


def an_election_changes_nothing(cluster, make_master_leave, undo):
    """Holds locks on partition 0 (owner not the master), makes the master leave, renews through
    the owner during the election and after it (past the 3 s ownership-confirmation window), and
    checks that nothing changed for the locks."""
    with no_rebalancing(cluster):
        owner, epoch, master = owner_that_is_not_the_master(cluster)
        settled(owner)
        via = next(n for n in live(cluster) if n is not owner and n is not master)
        keys = tuple(keys_in_partition(via, 0, "elect", 3))
        counted, held, tokens = hold_locks_before_an_election(owner, via, keys)
        renewed = next(iter(held))
        try:
            with RenewRecorder(owner, renewed, held[renewed][0]) as recorder:
                make_master_leave(owner, master)
                new_master = wait_for_new_master(owner, master.name, cluster=cluster)
                time.sleep(5)  # keep renewing past the ownership-confirmation window
            print(f"\nmaster {master.name} -> {new_master}; {len(recorder.statuses)} renews during the election")
            assert_the_election_changed_nothing(cluster, owner, epoch, counted, held, tokens, recorder.statuses)
        finally:
            undo(owner, master)


def test_a_partition_moved_again_and_again_with_a_waiter_queued_loses_nothing(cluster):
    """Partition 0 is moved four times (reroute) while a key is held and a waiter queues on it:
    after each move the holder holds with its token, the waiter is queued again, the new owner
    serves the partition `active` (never in grace), and every token is larger than the ones
    before; when the holder releases, the waiter is granted."""
    with no_rebalancing(cluster):
        node = cluster.nodes[0]
        settled(node)
        held, counted = keys_in_partition(node, 0, "moves", 2)
        tokens = [take(node, held, "holder", lease="5m")]
        waiter = Waiter(cluster.nodes[1], held, "waiter", wait="5m")
        assert waiters_of(node, held) == ["waiter"]
        for move in range(4):
            owner, _ = owner_of_partition(cluster)
            shards = http(node, "GET", "/_cat/shards/.locks?format=json&h=shard,node").json()
            with_copy = {s["node"] for s in shards if s["shard"] == "0"}
            target = next(n for n in live(cluster) if n.name not in with_copy)
            seen = move_partition(cluster, target)
            assert seen and set(seen) == {"active"}, f"move {move}: partition 0 on {target.name} was {seen}"
            assert holders_of(target, held) == [("holder", tokens[0])], f"move {move}: the holder was lost"
            assert waiters_of(target, held) == ["waiter"], f"move {move}: the waiter was lost"
            tokens.append(take(node, counted, f"c{move}"))
            assert http(node, "POST", f"/_locks/{counted}/_release", {"owner": f"c{move}", "acquisition": f"c{move}"}).status_code == 200
            assert tokens[-1] > max(tokens[:-1]), f"move {move}: token {tokens[-1]} after {tokens[:-1]}"
        assert http(node, "POST", f"/_locks/{held}/_release", {"owner": "holder", "acquisition": "holder"}).status_code == 200
        granted = waiter.granted()
        assert granted["fencing_token"] > max(tokens)
        assert http(node, "POST", f"/_locks/{held}/_release", {"owner": "waiter", "acquisition": "waiter"}).status_code == 200


def test_a_resumed_old_owner_asked_only_with_reads_grants_nothing(cluster):
    """Partition 0's owner is frozen (SIGSTOP) while it holds a key with a short lease and has a
    waiter queued on it; the cluster (default fault detection) drops the node and promotes the
    replica, which gives the key to someone else once the lease ran out. Reads sent to the frozen
    node (GET, list, stats, diagnostics) are answered the moment it resumes: they must not move
    its time on, so its waiter is never granted and the new holder stays the only holder."""
    with no_rebalancing(cluster):
        owner, _, _ = owner_that_is_not_the_master(cluster)
        settled(owner)
        others = [n for n in live(cluster) if n is not owner]
        (k,) = keys_in_partition(others[0], 0, "frozen", 1)
        old = take(others[0], k, "old", lease="3s")
        waiter = Waiter(owner, k, "waiter", wait="30s")
        assert waiters_of(owner, k) == ["waiter"]
        reads = [f"/_locks/{k}", f"/_locks?prefix={k}", "/_locks/_stats/_local", "/_locks/_node/diagnostics"]
        answered = []
        pid = owner.server_pid()
        os.kill(pid, signal.SIGSTOP)
        try:
            granted_by_the_new_owner(others[1], k, old)
            threads = [threading.Thread(target=lambda path=path: answered.append(
                http(owner, "GET", path, timeout=60).status_code), daemon=True) for path in reads]
            for t in threads:
                t.start()
        finally:
            os.kill(pid, signal.SIGCONT)
        for t in threads:
            t.join(60)
        waiter.thread.join(120)
        w = waiter.response
        print(f"\nreads queued on the frozen owner answered: {answered}; its waiter got: "
              f"{w.status_code if isinstance(w, requests.Response) else w}")
        assert answered, "the resumed old owner answered none of the reads: the test proved nothing"
        assert not (isinstance(w, requests.Response) and w.status_code == 200), f"the old owner granted its waiter: {w.text}"
        assert [o for o, _ in holders_of(others[0], k)] == ["new"]
        assert http(others[1], "POST", f"/_locks/{k}/_release", {"owner": "new", "acquisition": "new"}).status_code == 200
        r = http(others[0], "GET", "/_cluster/health?wait_for_nodes=3&wait_for_status=green&timeout=120s", timeout=130)
        assert r.status_code == 200, r.text


def test_a_resumed_old_owner_answers_nothing_the_new_owner_does_not_hold(cluster):
    """Partition 0's owner is frozen (SIGSTOP) past fault detection (Elasticsearch's default); the
    promoted copy grants the key to a new holder and elects a new leader (the old leader
    force-released). Then the old owner resumes, and for 10 s every request goes through it — as
    coordinator, with its stale cluster state until it learns better: no acquire is granted, the
    new holder's renewal is never told "not held", a watch on the new holder's token never
    answers that its lock ended, and an observe never shows the old leader (docs/ARCHITECTURE.md
    "Cut-off owners")."""
    with no_rebalancing(cluster):
        owner, _, _ = owner_that_is_not_the_master(cluster)
        settled(owner)
        a, b = [n for n in live(cluster) if n is not owner]
        k, election = keys_in_partition(a, 0, "resumed", 2)
        r = http(a, "POST", f"/_elections/{election}/_campaign", {"candidate": "leader-old", "acquisition": "leader-old", "lease": "10m"})
        assert r.status_code == 200, r.text
        pid = owner.server_pid()
        os.kill(pid, signal.SIGSTOP)
        try:
            new_token = granted_by_the_new_owner(b, k, 0)["fencing_token"]
            r = http(b, "POST", f"/_locks/{election}/_force_release", {"scope": "election", "reason": "test"})
            assert r.status_code == 200, r.text
            r = http(b, "POST", f"/_elections/{election}/_campaign", {"candidate": "leader-new", "acquisition": "leader-new", "lease": "10m"})
            assert r.status_code == 200, r.text
            new_term = r.json()["term"]
        finally:
            os.kill(pid, signal.SIGCONT)
        seen = stale_answers_through(owner, k, new_token, election, new_term, seconds=10)
        print(f"\nthrough the resumed old owner for 10 s: {seen}")
        assert seen["acquire"] and seen["renew"] and seen["watch"] and seen["observe"], seen
        assert [o for o, _ in holders_of(a, k)] == ["new"]
        assert http(b, "POST", f"/_locks/{k}/_release", {"owner": "new", "acquisition": "new"}).status_code == 200
        http(b, "POST", f"/_elections/{election}/_resign", {"candidate": "leader-new", "acquisition": "leader-new"})
        r = http(a, "GET", "/_cluster/health?wait_for_nodes=3&wait_for_status=green&timeout=120s", timeout=130)
        assert r.status_code == 200, r.text


def stale_answers_through(node, key, token, election, term, seconds):
    """Sends acquire, renew, watch and observe through `node` in turn for `seconds`, failing at
    the first answer only a stale owner would give; answers the statuses seen per request."""
    seen = {"acquire": [], "renew": [], "watch": [], "observe": []}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        r = http(node, "POST", f"/_locks/{key}/_acquire", {"owner": "intruder", "acquisition": "intruder"}, timeout=30)
        seen["acquire"].append(r.status_code)
        assert r.status_code != 200, f"the resumed old owner granted a held key: {r.text}"
        r = http(node, "POST", f"/_locks/{key}/_renew", {"owner": "new", "acquisition": "new", "fencing_token": token}, timeout=30)
        seen["renew"].append(r.status_code)
        assert r.status_code in (200, 503), f"the new holder's renewal answered {r.status_code}: {r.text}"
        r = http(node, "GET", f"/_locks/{key}/_watch?token={token}&wait=0s", timeout=30)
        seen["watch"].append(r.status_code)
        assert r.status_code == 503 or (r.status_code == 200 and r.json()["changed"] is False), \
            f"a watch said the new holder's lock ended: {r.text}"
        r = http(node, "GET", f"/_elections/{election}/_observe?term={term}&wait=0s", timeout=30)
        seen["observe"].append(r.status_code)
        assert r.status_code == 503 or (r.status_code == 200 and r.json()["leader"] == "leader-new"), \
            f"an observe showed a leader the new owner does not have: {r.text}"
    return {name: sorted(set(codes)) for name, codes in seen.items()}


def test_full_cluster_restart_brings_holders_back_with_larger_tokens(cluster):
    """Every node stopped, then started: each partition's batches persisted in its shard folder
    bring the holders back (their leases counted from the restart), with no grace, and the next
    tokens are larger than every token before."""
    node = cluster.nodes[0]
    settled(node)
    k0, c0 = keys_in_partition(node, 0, "restart0", 2)
    (k1,) = keys_in_partition(node, 1, "restart1", 1)
    before = {k0: take(node, k0, "before-0", lease="5m"), k1: take(node, k1, "before-1", lease="5m")}
    issued = max(before.values())

    restart_all(cluster)
    node.get("/_cluster/health/.locks?wait_for_status=yellow&timeout=120s", timeout=130)

    for k, who in ((k0, "before-0"), (k1, "before-1")):
        deadline = time.monotonic() + 60
        while (held := holders_of(node, k)) == [] and time.monotonic() < deadline:
            time.sleep(0.2)  # the partition opens once its primary is started
        assert held == [(who, before[k])], f"{k} after the restart: {held}"
        assert http(cluster.nodes[1], "POST", f"/_locks/{k}/_renew", {"owner": who, "acquisition": who}).status_code == 200
    after = take(cluster.nodes[2], c0, "after")
    assert after > issued, f"token {after} after the restart, {issued} before"
    for k, who in ((k0, "before-0"), (k1, "before-1"), (c0, "after")):
        assert http(node, "POST", f"/_locks/{k}/_release", {"owner": who, "acquisition": who}).status_code == 200
