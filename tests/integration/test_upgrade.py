"""Upgrades on real nodes (issue 28; docs/OPERATIONS.md "Upgrading"), the way Elasticsearch's own
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
  mixes plugins, creating a group is refused with 400 naming `group`; after the restart groups
  work through every node (issue 38).

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
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import requests

import node as esnode
from cluster_kit import http
from history import History, check, longest_gaps
from lockclient import wait_until
from workers import Holder, Load, Worker

ROOT = Path(__file__).resolve().parents[2]


def pom_property(name: str) -> str:
    return re.search(rf"<{re.escape(name)}>([^<]+)</{re.escape(name)}>", (ROOT / "pom.xml").read_text()).group(1)


def makefile_value(name: str) -> str:
    return re.search(rf"^{name} := (\S+)$", (ROOT / "Makefile").read_text(), re.M).group(1)


FROM, TO = pom_property("es8.version"), pom_property("es.version")
PREVIOUS_PLUGIN = makefile_value("PREVIOUS_PLUGIN")
SEED = int(os.environ.get("ESLM_UPGRADE_SEED") or random.SystemRandom().randrange(2**31))
LONG_LEASE = "10m"  # the plugin's default locks.lease.max: outlives the whole test
HELD = 6  # long holders, spread over the partitions
TRAFFIC_KEYS = ("upgrade-a", "upgrade-b")
GREEN_S = 240  # a node started on a loaded two-core machine, then its replicas recovered

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("ES_VERSION", TO) != TO,
                       reason="upgrades from the other versions run once, on the default version's pass"),
]


def previous_plugin() -> Path:
    zip_file = esnode.BUILD / "previous" / f"{PREVIOUS_PLUGIN}-es{FROM}.zip"
    if not zip_file.exists():
        pytest.fail(f"{zip_file} is missing: `make previous-plugin` builds it")
    return zip_file


class Upgrade:
    """One cluster on its way from one release to another, with long holders and clients."""

    def __init__(self, name: str, version: str, plugin: Path):
        self.cluster = esnode.Cluster(name, 3, extra_settings={"locks.partitions": 2})
        self.cluster.start(version, plugin)
        self.history, self.stop = History(), threading.Event()
        self.held: dict[str, tuple[str, int]] = {}
        self.steps: list[tuple[str, float, float]] = []  # (what, started, green)
        self.plugins_mixed: list[tuple[float, float]] = []  # a plugin without acquisitions beside this one
        load = Load(seed=SEED, keys=TRAFFIC_KEYS, lease_s=5, hold_lease_s=10, hold_s=(3, 8), wait_s=3)
        self.workers = [Worker(i, self.cluster, self.history, self.stop, load) for i in range(2)]
        self.workers.append(Holder(0, self.cluster, self.history, self.stop, load))

    def hold_long(self) -> None:
        node = self.cluster.nodes[0]
        for i in range(HELD):
            key, owner = f"long-{i}", f"long-holder-{i}"
            r = http(node, "POST", f"/_locks/{key}/_acquire", {"owner": owner, "lease": LONG_LEASE})
            assert r.status_code == 200, r.text
            self.held[key] = (owner, r.json()["fencing_token"])
        partitions = {lock["partition"] for lock in http(node, "GET", "/_locks?prefix=long-").json()["locks"]}
        assert len(partitions) == 2, f"the long holders all landed in partitions {partitions}: pick other keys"

    def start_clients(self) -> None:
        for w in self.workers:
            w.thread.start()

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
            self.steps.append((f"{node.name} onto {version}", started, time.monotonic()))
            self.assert_kept(f"after {node.name} was upgraded to {version}")
            self.assert_resumed()
            if while_mixed is not None and node is not self.cluster.nodes[-1]:
                while_mixed(node)
        if mixes_plugins:
            self.plugins_mixed.append((mixed_from, time.monotonic()))

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
        self.steps.append((f"full-cluster restart onto {version}", started, time.monotonic()))
        self.assert_kept(f"after the full-cluster restart onto {version}")
        self.assert_resumed()

    @staticmethod
    def allocation(node, value) -> None:
        """`cluster.routing.allocation.enable`: "primaries" while a node is away (its replicas wait
        for it instead of being copied elsewhere), back to the default (None) once it is in."""
        r = http(node, "PUT", "/_cluster/settings", {"persistent": {"cluster.routing.allocation.enable": value}})
        assert r.status_code == 200, r.text

    @staticmethod
    def green(node) -> None:
        r = http(node, "GET", f"/_cluster/health?wait_for_nodes=3&wait_for_status=green&timeout={GREEN_S}s",
                 timeout=GREEN_S + 10)
        assert r.status_code == 200 and not r.json()["timed_out"], r.text

    def assert_kept(self, when: str) -> None:
        """Through every node: each long holder still holds its key with its token, and another
        owner's acquire is refused. A partition that is still opening answers 503 for a moment:
        asked again until it serves, within a bound."""
        for node in self.cluster.nodes:
            for key, (owner, token) in self.held.items():
                state = wait_until(lambda: served_state(node, key), timeout=60,
                                   message=f"{key} served through {node.name} {when}")
                holders = [(h["owner"], h["fencing_token"]) for h in state["holders"]]
                assert holders == [(owner, token)], f"{key} through {node.name} {when}: {holders}"
            key = next(iter(self.held))
            r = http(node, "POST", f"/_locks/{key}/_acquire", {"owner": "intruder", "wait": "0s"})
            assert r.status_code == 409, f"{key} acquired by another owner through {node.name} {when}: {r.text}"

    def assert_resumed(self) -> None:
        """The clients are granted locks again after the last step, on every traffic key."""
        what, _, green = self.steps[-1]
        for key in TRAFFIC_KEYS:
            wait_until(lambda: any(op.f == "acquire" and op.type == "ok" and op.key == key and op.complete > green
                                   for op in self.history.ops()),
                       timeout=60, interval=0.2, message=f"seed {SEED}: a grant of {key} after {what}")

    def finish(self) -> None:
        """Stops the clients; checks the history; releases the long holders and proves the next
        tokens of their keys are larger."""
        self.stop.set()
        self.history.end()
        for w in self.workers:
            w.thread.join(60)
        assert not [w.name for w in self.workers if w.thread.is_alive()], "a client did not stop"
        report = check(self.history, keys=TRAFFIC_KEYS, ids_unkept=self.plugins_mixed)
        print(f"\nseed {SEED} (ESLM_UPGRADE_SEED reproduces the clients' choices)\n"
              + report.summary(origin=self.history.started), flush=True)
        self.print_steps()
        assert report.violations == [], f"seed {SEED}: " + report.summary(origin=self.history.started)
        node = self.cluster.nodes[-1]
        for key, (owner, token) in self.held.items():
            r = http(node, "POST", f"/_locks/{key}/_release", {"owner": owner, "fencing_token": token})
            assert r.status_code == 200, f"{key}: {r.text}"
            r = http(node, "POST", f"/_locks/{key}/_acquire", {"owner": "next"})
            assert r.status_code == 200 and r.json()["fencing_token"] > token, f"{key}: {r.text} after {token}"

    def print_steps(self) -> None:
        ops = self.history.ops()
        origin = self.history.started
        for what, started, green in self.steps:
            window = [op for op in ops if op.process != "nemesis" and started <= op.invoke <= green + 5]
            refused = Counter(op.status for op in window if op.type == "fail" and op.status != "not connected")
            unsent = sum(op.status == "not connected" for op in window)
            unknown = sum(op.type == "info" for op in window)
            gaps = longest_gaps(ops, started, green + 5, TRAFFIC_KEYS)
            longest = max(gaps.values(), key=lambda g: g.seconds)
            print(f"  {what}: {started - origin:6.1f}s to green at {green - origin:6.1f}s; "
                  f"longest without a grant {longest.seconds:.1f}s on {longest.key}; of {len(window)} "
                  f"requests {unknown} unknown, {unsent} not sent (a node not listening yet), refused: "
                  f"{dict(refused)}", flush=True)

    def close(self) -> None:
        self.stop.set()
        self.cluster.stop()


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


def served_state(node, key):
    try:
        r = http(node, "GET", f"/_locks/{key}", timeout=10)
    except requests.RequestException:
        return None
    return r.json() if r.status_code == 200 else None


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


def test_plugin_upgrade_then_full_restart_onto_the_new_release_keeps_every_holder(upgrade_factory):
    u = upgrade_factory("eslm-it-upgrade-plugin", FROM, previous_plugin())
    u.hold_long()
    u.start_clients()
    u.rolling(FROM, esnode.plugin_zip(FROM), while_mixed=groups_refused_while_an_older_node_is_in, mixes_plugins=True)
    u.full_restart(TO, esnode.plugin_zip(TO))
    groups_served_once_every_node_is_upgraded(u.cluster)
    u.finish()
