"""A promoted copy serves only once the old owner's lease has run out, also when the failover is
fast enough that nothing else would have made it wait (docs/ARCHITECTURE.md "Silent owners", "Who
takes over"): the owner frozen and its transport cut, its primary failed at once with the cluster
reroute API, and the owner resumed inside its lease (`promotion_race`). Whatever the old owner
answers for the key after the new owner released it is a refusal; the same rounds on a build
whose promoted copy does not wait find the old owner serving next to the new one
(`test_copy_lease_wait_flawed.py`), so this test can fail.

The cluster is started by scripts/node.py (plugin installed with `elasticsearch-plugin install`),
its nodes under Unix users of their own so that iptables can cut one (scripts/netcut.py); the
tests talk HTTP only."""

from __future__ import annotations

import pytest

from cluster_kit import ThreeNodes, no_rebalancing
from promotion_race import SETTINGS, any_decisive, race, rounds_until

pytestmark = pytest.mark.slow

THREE_NODES = ThreeNodes("eslm-it-copy-lease-wait", SETTINGS,
                         users="eslmwait", cuts=True)

#: At least ROUNDS rounds, and then more until one is decisive (the old owner resumed inside its
#: lease, `promotion_race.rounds_until`), for at most MAX_ROUNDS and ROUNDS_S.
ROUNDS = 3
MAX_ROUNDS = 10
ROUNDS_S = 300


def test_the_old_owner_serves_nothing_once_the_promoted_copy_serves(cluster):
    with no_rebalancing(cluster):
        races = rounds_until(lambda i: race(cluster, i), any_decisive, ROUNDS, MAX_ROUNDS, ROUNDS_S)
    assert any_decisive(races), "no round resumed the old owner inside its lease: it proved nothing"
    for r in races:
        assert r.epoch_after > r.epoch_before, f"the reroute failed the owner over: {r.reroute}"
        assert r.released_at is not None, "the new owner served the release"
        assert any(a.status == 503 for a in r.answers), "the old owner answered no probe: it proved nothing"
        assert r.stale() == [], f"the old owner served after the new one did: {r.stale()[:3]}"
