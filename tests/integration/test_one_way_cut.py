"""One-way cuts between the nodes of a three-node cluster with default settings
(scripts/netcut.py `cut_one_way`; docs/RELIABILITY.md "One-way cuts"). A cut that takes a node's
traffic both ways is the nemesis's (test_nemesis.py); here one node still hears the other while it
is not heard, the case where each side may believe something else:

- the master no longer reaches partition 0's owner, which still reaches the master and the
  replica: the master drops the owner, the replica is promoted, and the old owner, which still
  hears the cluster, must not grant anything from then on;
- the owner no longer reaches the master, which still reaches the owner: the owner gets no
  confirmation and stops granting; Elasticsearch must still drop it, or the partition would stay
  unconfirmed for as long as the cut lasts.

In both, the holder taken before the cut keeps its lock and token, a grant through another node
comes in a new epoch, and nothing the old owner answers during the cut is a grant of its own.
The cluster's nodes run as Unix users of their own (`eslmoneway<i>`), so the cut reaches no other
cluster."""

from __future__ import annotations

import time

import pytest
import requests

import netcut
import node as esnode
from cluster_kit import holders_of, http, keys_in_partition, live, owner_that_is_not_the_master, settled, take

pytestmark = pytest.mark.slow

EPOCH_SHIFT = 40
# A grant through another node, in a new epoch, within this after the cut: Elasticsearch's fault
# detection (three checks of 10 s), its removal of the node and the promotion, with room to spare.
FAILOVER_WITHIN_S = 120


@pytest.fixture(scope="module")
def cluster():
    why = netcut.usable()
    if why is not None:
        pytest.fail(f"the one-way cuts need iptables: {why}")
    c = esnode.Cluster("eslm-it-one-way", 3, users="eslmoneway",
                       extra_settings={"cluster.routing.rebalance.enable": "none"})
    c.start()
    try:
        yield c
    finally:
        netcut.heal_all()
        c.stop()


def through_the_old_owner(old, key, answers):
    """An intruder's try-lock of the held key and of a fresh key, through the old owner (HTTP still
    reaches it); each answer goes into `answers` as (what, sent at, status, token or None)."""
    for what, k in (("held", key), ("fresh", f"{key}-fresh-{len(answers)}")):
        sent = time.monotonic()
        try:
            r = http(old, "POST", f"/_locks/{k}/_acquire", {"owner": "intruder", "lease": "5s"}, timeout=30)
        except requests.RequestException as e:
            answers.append((what, sent, type(e).__name__, None))
            continue
        answers.append((what, sent, r.status_code, r.json().get("fencing_token") if r.status_code == 200 else None))


def granted_in_a_new_epoch(node, key, epoch):
    """One ask of `node` for `key`: (token, when answered) when granted in an epoch above `epoch`,
    else None (a 503, or a grant in the old epoch before the failover, released again)."""
    r = http(node, "POST", f"/_locks/{key}/_acquire", {"owner": "after-cut", "lease": "5m"}, timeout=30)
    if r.status_code != 200:
        assert r.status_code == 503, r.text
        return None
    token = r.json()["fencing_token"]
    if token >> EPOCH_SHIFT > epoch:
        return token, time.monotonic()
    assert http(node, "POST", f"/_locks/{key}/_release", {"owner": "after-cut"}).status_code == 200
    return None


def fail_over_with_a_one_way_cut(cluster, deaf, mute_from):
    """Cuts what `mute_from` sends to `deaf` (nodes, by role), then asks for a fresh key through
    the third node until it is granted in a new epoch, asking the old owner meanwhile. Before the
    failover the old owner may grant (it is still the owner); a request sent to it after the new
    epoch's first grant was answered must not be granted in its epoch."""
    owner, epoch, master = owner_that_is_not_the_master(cluster)
    settled(owner)
    roles = {"owner": owner, "master": master}
    src, dst = roles[mute_from], roles[deaf]
    (third,) = [n for n in live(cluster) if n not in (owner, master)]
    held, fresh = keys_in_partition(third, 0, "one-way", 2)
    token = take(third, held, "holder", lease="5m")
    answers: list = []
    netcut.cut_one_way(src, dst)
    cut_at = time.monotonic()
    try:
        granted = None
        while granted is None and time.monotonic() - cut_at < FAILOVER_WITHIN_S:
            through_the_old_owner(owner, held, answers)
            granted = granted_in_a_new_epoch(third, fresh, epoch)
            if granted is None:
                time.sleep(0.5)
        assert granted is not None, f"no grant in a new epoch through {third.name} within {FAILOVER_WITHIN_S}s"
        _, new_at = granted
        for _ in range(3):  # the old owner, asked again once the new one serves
            through_the_old_owner(owner, held, answers)
        print(f"\n{mute_from} -> {deaf} cut: granted in a new epoch through {third.name} after "
              f"{new_at - cut_at:.1f}s; the old owner answered "
              f"{sorted({(w, s, sent > new_at) for w, sent, s, _ in answers}, key=str)} (what, status, after)")
        grants = [a for a in answers if a[2] == 200]
        assert [a for a in grants if a[0] == "held"] == [], f"the old owner granted the held key: {grants}"
        stale = [a for a in grants if a[1] > new_at and a[3] >> EPOCH_SHIFT <= epoch]
        assert stale == [], f"the old owner granted in its epoch after the new owner served: {stale}"
        assert any(a[1] > new_at for a in answers), "the old owner was asked after the failover"
        assert holders_of(third, held) == [("holder", token)], "the holder kept its lock through the cut"
        r = http(third, "POST", f"/_locks/{held}/_renew", {"owner": "holder"})
        assert r.status_code == 200, r.text
    finally:
        netcut.heal_one_way(src, dst)
    r = http(third, "GET", "/_cluster/health/.locks?wait_for_nodes=3&wait_for_status=green&timeout=170s", timeout=180)
    assert r.status_code == 200 and not r.json()["timed_out"], r.text
    for k, who in ((held, "holder"), (fresh, "after-cut")):
        assert http(third, "POST", f"/_locks/{k}/_release", {"owner": who}).status_code == 200


def test_a_master_that_no_longer_hears_the_owner_fails_it_over_and_the_old_owner_grants_nothing(cluster):
    fail_over_with_a_one_way_cut(cluster, deaf="owner", mute_from="master")


def test_an_owner_that_no_longer_reaches_the_master_stops_and_is_failed_over(cluster):
    fail_over_with_a_one_way_cut(cluster, deaf="master", mute_from="owner")
