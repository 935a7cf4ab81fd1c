"""Upgrades on real nodes (issue 28; docs/OPERATIONS.md "Upgrading Elasticsearch and the plugin"), the way Elasticsearch's own
`qa/rolling-upgrade` tests its own: a cluster of three nodes of the old release with locks held
and clients taking and releasing locks, then each node in turn stopped and started on the new
release over the same data, as the documented procedure goes (replica allocation paused while a
node is away, resumed once it is back, green before the next node).

- `test_rolling_upgrade_of_elasticsearch_keeps_every_holder`: Elasticsearch $FROM (8.19) with
  this plugin, node by node onto $TO (9.x) with this plugin; for a while the cluster mixes both
  releases and their transport versions.
- `test_plugin_upgrade_then_full_restart_onto_the_new_release_keeps_every_holder`: the plugin as
  released before its formats were versioned (`make previous-plugin`: the commit PREVIOUS_PLUGIN
  of the Makefile, built for $FROM), node by node onto this build on the same Elasticsearch; then
  every node stopped and started on $TO at once (a full-cluster restart). While the cluster
  mixes plugins, creating a group is refused with 400 naming `group`, and the owner is killed and
  frozen and the master frozen (MIXED_FAULTS, issue 48 item 6); after the restart groups work
  through every node (issue 38).

After every step: each long holder (10-minute leases, taken before the first step) is still the
holder with its token, asked through every node, and a conflicting acquire is refused; at the
end, new tokens of those keys are larger than the old ones. The clients' history is checked as
the fault test's is (tests/integration/history.py): no two holders at once, no renewal refused
inside its lease, tokens rising per key. How long lock requests failed around each step is
printed (the longest stretch without a grant, and the requests that failed).

Both need the zips of both versions (`make java-test`) and run once per CI run, on the default
version's pass; seeded by ESLM_UPGRADE_SEED (the workers' choices), else a random seed, printed."""

from __future__ import annotations

import os
import random
import re
import time
from pathlib import Path

import pytest

import node as esnode
from cluster_kit import http
from held_load import GREEN_S, HeldLoad
from nemesis import Nemesis

ROOT = Path(__file__).resolve().parents[2]


def pom_property(name: str) -> str:
    return re.search(rf"<{re.escape(name)}>([^<]+)</{re.escape(name)}>", (ROOT / "pom.xml").read_text()).group(1)


def makefile_value(name: str) -> str:
    return re.search(rf"^{name} := (\S+)$", (ROOT / "Makefile").read_text(), re.M).group(1)


FROM, TO = pom_property("es8.version"), pom_property("es.version")
PREVIOUS_PLUGIN = makefile_value("PREVIOUS_PLUGIN")
SEED = int(os.environ.get("ESLM_UPGRADE_SEED") or random.SystemRandom().randrange(2**31))
TRAFFIC_KEYS = ("upgrade-a", "upgrade-b")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.figures,
    pytest.mark.skipif(os.environ.get("ES_VERSION", TO) != TO,
                       reason="upgrades from the other versions run once, on the default version's pass"),
]


def previous_plugin() -> Path:
    zip_file = esnode.BUILD / "previous" / f"{PREVIOUS_PLUGIN}-es{FROM}.zip"
    if not zip_file.exists():
        pytest.fail(f"{zip_file} is missing: `make previous-plugin` builds it")
    return zip_file


class Upgrade(HeldLoad):
    """One cluster on its way from one release to another, with long holders and clients."""

    def __init__(self, name: str, version: str, plugin: Path):
        cluster = esnode.Cluster(name, 3, extra_settings={"locks.partitions": 2})
        cluster.start(version, plugin)
        super().__init__(cluster, SEED, TRAFFIC_KEYS)
        self.faults: list[str] = []  # what faults_while_mixed made

    def rolling(self, version: str, plugin: Path, while_mixed=None, mixes_plugins: bool = False) -> None:
        """Each node in turn onto `version` with `plugin`, checking the holders after each, and
        `while_mixed(upgraded node)` after each but the last. `mixes_plugins`: the nodes ran the
        plugin without acquisitions, so from the first step to the last the cluster mixes both."""
        mixed_from = time.monotonic()
        for node in self.cluster.nodes:
            started = time.monotonic()
            op = self.history.invoke("nemesis", "upgrade", node=node.name, detail=f"{node.version} -> {version}")
            via = next(n for n in self.cluster.nodes if n is not node)
            self.allocation(via, "primaries")
            assert node.stop() in (0, 143), node.tail_log()
            node.upgrade(version, plugin)
            node.start()
            node.wait_until_ready(timeout=GREEN_S)
            self.allocation(node, None)
            self.green(node)
            self.history.ok(op)
            self.step(f"{node.name} onto {version}", started)
            if while_mixed is not None and node is not self.cluster.nodes[-1]:
                while_mixed(node)
        if mixes_plugins:
            self.ids_unkept.append((mixed_from, time.monotonic()))

    def full_restart(self, version: str, plugin: Path) -> None:
        """Every node stopped, then all started on `version` with `plugin`."""
        started = time.monotonic()
        op = self.history.invoke("nemesis", "full-restart", detail=f"-> {version}")
        for node in self.cluster.nodes:
            assert node.stop() in (0, 143), node.tail_log()
        for node in self.cluster.nodes:
            node.upgrade(version, plugin)
            node.start()
        for node in self.cluster.nodes:
            node.wait_until_ready(timeout=GREEN_S)
        self.green(self.cluster.nodes[0])
        self.history.ok(op)
        self.step(f"full-cluster restart onto {version}", started)

    @staticmethod
    def allocation(node, value) -> None:
        """`cluster.routing.allocation.enable`: "primaries" while a node is away (its replicas wait
        for it instead of being copied elsewhere), back to the default (None) once it is in."""
        r = http(node, "PUT", "/_cluster/settings", {"persistent": {"cluster.routing.allocation.enable": value}})
        assert r.status_code == 200, r.text


GROUPS = [f"upgrade-group-{i}" for i in range(6)]  # names over both partitions


def groups_refused_while_an_older_node_is_in(upgraded) -> None:
    """Issue 38: while a node of the older plugin is a member, creating a group through an
    upgraded node is refused with 400 naming `group` (docs/API.md "Groups"): by the upgraded
    owner's core, or by the coordinator when an older node owns the group's partition, which would
    not know the action. A state written for the older node therefore never holds a group."""
    for name in GROUPS:
        r = http(upgraded, "PUT", f"/_groups/{name}")
        assert r.status_code == 400, f"{name} through {upgraded.name}: {r.text}"
        assert r.json()["error"]["reason"].startswith("[group] groups need every node"), r.text


def groups_served_once_every_node_is_upgraded(cluster) -> None:
    """After the upgrade, groups work through every node: created, joined, listed, left, deleted."""
    for node, name in zip(cluster.nodes * 2, GROUPS):
        assert http(node, "PUT", f"/_groups/{name}").status_code == 200, name
        r = http(node, "POST", f"/_groups/{name}/_join", {"member": "m", "capabilities": {"v": 1}})
        assert r.status_code == 200, r.text
        r = http(node, "GET", f"/_groups/{name}")
        assert r.status_code == 200 and [m["member"] for m in r.json()["members"]] == ["m"], r.text
        token = r.json()["members"][0]["fencing_token"]
        r = http(node, "POST", f"/_groups/{name}/_leave", {"member": "m", "fencing_token": token})
        assert r.status_code == 200, r.text
        assert http(node, "DELETE", f"/_groups/{name}").status_code == 200, name


@pytest.fixture
def upgrade_factory():
    made = []

    def make(name: str, version: str, plugin: Path) -> Upgrade:
        u = Upgrade(name, version, plugin)
        made.append(u)
        return u

    yield make
    for u in made:
        u.close()


def test_rolling_upgrade_of_elasticsearch_keeps_every_holder(upgrade_factory):
    u = upgrade_factory("eslm-it-upgrade-es", FROM, esnode.plugin_zip(FROM))
    u.hold_long()
    u.start_clients()
    u.rolling(TO, esnode.plugin_zip(TO))
    u.finish()


# Faults while the cluster mixes plugins (issue 48 item 6): copy leases are off then, owners serve
# on the master's confirmations and a promoted copy waits out the master's window too
# (docs/ARCHITECTURE.md "Silent owners"). After each step but the last: the owner killed -9 and
# started again, the owner frozen across the master's silent-owner bound, the master frozen.
MIXED_FAULTS = (("kill", "owner"), ("short_pause", "owner"), ("short_pause", "master"))


def faults_while_mixed(u: Upgrade):
    """The `while_mixed` hook: the groups' refusal, then MIXED_FAULTS one after the other, each
    recorded in the clients' history (the checker holds the clients to them as to any fault),
    healed and the cluster green again before the next; the holders kept after each."""
    nemesis = Nemesis(u.cluster, u.history, u.stop, SEED)

    def hook(upgraded) -> None:
        groups_refused_while_an_older_node_is_in(upgraded)
        for kind, aim in MIXED_FAULTS:
            op = u.history.invoke("nemesis", kind)
            fields = getattr(nemesis, kind)(aim)
            made = fields.pop("effective")
            (u.history.ok if made else u.history.info)(op, **fields)
            nemesis.heal()
            assert not nemesis.errors, nemesis.errors
            u.green(upgraded)
            u.faults.append(f"{kind} {aim} while mixed after {upgraded.name}: {fields.get('detail')} "
                            f"({'made' if made else 'missed its aim'})")
            u.assert_kept(f"after {kind} of the {aim} while the plugins were mixed")
    return hook


def test_plugin_upgrade_then_full_restart_onto_the_new_release_keeps_every_holder(upgrade_factory):
    u = upgrade_factory("eslm-it-upgrade-plugin", FROM, previous_plugin())
    u.hold_long()
    u.start_clients()
    u.rolling(FROM, esnode.plugin_zip(FROM), while_mixed=faults_while_mixed(u), mixes_plugins=True)
    print("\n".join(u.faults), flush=True)
    assert sum("(made)" in f for f in u.faults) >= len(MIXED_FAULTS), f"too few faults hit their aim: {u.faults}"
    u.full_restart(TO, esnode.plugin_zip(TO))
    groups_served_once_every_node_is_upgraded(u.cluster)
    u.finish()
