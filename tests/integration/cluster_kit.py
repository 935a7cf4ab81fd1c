"""Helpers shared by the multi-node test modules (test_cluster.py, test_replication.py): HTTP to
one node, finding a partition's owner and the master, moving a partition, pausing rebalancing,
recording renewals during a fault. They talk HTTP to real nodes only."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests

import node as esnode
from lockclient import wait_until

# Notice a frozen or dead node within a few seconds rather than half a minute (Elasticsearch's
# follower and leader checks), for modules whose faults must resolve quickly.
FAST_FAULT_DETECTION = {
    "cluster.fault_detection.follower_check.interval": "1s",
    "cluster.fault_detection.follower_check.timeout": "2s",
    "cluster.fault_detection.follower_check.retry_count": "2",
    "cluster.fault_detection.leader_check.interval": "1s",
    "cluster.fault_detection.leader_check.timeout": "2s",
    "cluster.fault_detection.leader_check.retry_count": "2",
}

# For modules that move partition 0 around three nodes (planned moves, hand-overs): the plugin
# keeps lock copies off the elected master (locks.allocation.avoid_master, docs/ARCHITECTURE.md
# "Silent owners"), and with three nodes and two copies that leaves no node to move a copy to.
COPIES_MAY_SIT_ON_THE_MASTER = {"locks.allocation.avoid_master": "false"}


@dataclasses.dataclass(frozen=True)
class ThreeNodes:
    """A module's three-node cluster, which tests/integration/conftest.py's `cluster` fixture
    starts for it: set `THREE_NODES = ThreeNodes(...)` in the module. `name` names its folder
    under build/ (a module of its own each, so a failed run's logs stay apart); `users` the Unix
    users of its nodes (`<users><i>`: a module that cuts traffic by user takes users of its own,
    with `cuts`, which also requires iptables and heals every cut at the end); `variant` the plugin
    zip (scripts/node.py `plugin_zip`); `env` more environment for its nodes (a fault-injection
    library's ESLM_FAULT_FLAW)."""

    name: str
    settings: dict = dataclasses.field(default_factory=dict)
    users: str = esnode.RUN_AS
    variant: str | None = None
    env: dict = dataclasses.field(default_factory=dict)
    cuts: bool = False
    size: int = 3  # two for a module that needs no more than a primary and its replica


@dataclasses.dataclass(frozen=True)
class OneNode:
    """A module's own single node, which tests/integration/conftest.py's `own_node` fixture starts
    for it (and `lc` talks to): set `ONE_NODE = OneNode(...)` in the module, for a node whose
    settings differ from the shared one's (tests/conftest.py `single_node`). With
    `with_example_plugin`, examples/guarded-job-plugin is installed beside the plugin; with
    `security`, Elasticsearch security is on with its users and roles; `variant` picks the plugin
    zip (scripts/node.py `plugin_zip`). A module whose tests each break their node takes
    `fresh_node`, a node of this description per test, instead."""

    name: str
    settings: dict = dataclasses.field(default_factory=dict)
    with_example_plugin: bool = False
    security: esnode.Security | None = None
    variant: str | None = None


def refused_start(name: str, settings: dict | None = None, plugin: Path | None = None,
                  timeout: float = 180) -> tuple[int, str]:
    """A node that must stop by itself while it starts (a bad setting, a plugin zip without this
    platform's library): installed with `plugin` (default: this version's zip) and `settings`,
    started and awaited. Answers its exit code and what it wrote (its log's tail, then its
    stdout); fails if it is still running after `timeout` seconds."""
    version = esnode.es_version()
    node = esnode.Node(name, "node-0", esnode.free_port(), esnode.free_port(), extra_settings=settings)
    node.install(version, plugin or esnode.plugin_zip(version))
    node.start()
    try:
        code = node.process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the node did not stop by itself:\n{node.tail_log()}")
    finally:
        node.kill()
    return code, node.tail_log(400) + "\n" + (node.home / "stdout.txt").read_text(errors="replace")


def three_nodes(name, settings):
    """A three-node cluster of scripts/node.py with `settings`, for a module fixture (`yield
    from`): started, yielded, stopped at the end."""
    c = esnode.Cluster(name, 3, extra_settings=settings)
    c.start()
    try:
        yield c
    finally:
        c.stop()


def restart_all(cluster, ready: bool = True):
    """A full cluster restart: every node stopped (SIGTERM), then all started again, and with
    `ready` waited for."""
    for n in cluster.nodes:
        assert n.stop() in (0, 143), n.tail_log()
    for n in cluster.nodes:
        n.start()
    for n in cluster.nodes if ready else ():
        n.wait_until_ready()


def rejoin(node, via):
    """Starts `node` again (killed by a test) and waits until the cluster has three nodes and
    every shard assigned."""
    node.start()
    node.wait_until_ready()
    r = http(via, "GET", "/_cluster/health?wait_for_nodes=3&wait_for_status=green&timeout=120s", timeout=130)
    assert r.status_code == 200 and r.json()["number_of_nodes"] == 3, r.text


def reporting(errors, fn, *args):
    """Runs `fn` (a thread's target), keeping what it raised in the list `errors`, which the
    test asserts empty: an exception in a thread cannot fail a test by itself."""
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - reported through `errors`
        errors.append(f"{type(e).__name__}: {e}")


def http(node, method, path, body=None, timeout=60):
    return requests.request(method, node.url + path, json=body, timeout=timeout)


def holders_of(node, key):
    """(owner, fencing token) of each holder of `key`, as `node` answers."""
    return [(h["owner"], h["fencing_token"]) for h in http(node, "GET", f"/_locks/{key}").json()["holders"]]


def take(node, key, owner, **body):
    """Acquires `key` for `owner` through `node` (which must grant it); answers the token."""
    r = http(node, "POST", f"/_locks/{key}/_acquire", {"owner": owner, "acquisition": owner, **body})
    assert r.status_code == 200, r.text
    return r.json()["fencing_token"]


def served(node, path):
    """The JSON answer of `GET path` through `node` once the partition behind it serves again,
    else None (503 or a failed connection while it fails over): a predicate for `wait_until`."""
    try:
        r = http(node, "GET", path, timeout=10)
    except requests.RequestException:
        return None
    return r.json() if r.status_code == 200 else None


def owner_of_partition(cluster, partition=0, seen=None):
    """The node serving `partition` (once it is `active`), from the nodes' own diagnostics.
    Exactly one node may serve it at a time; two would be a double owner, and fail the test.
    `seen`, a list, collects every (node, state) observed on the way, e.g. a passing grace."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        serving = serving_nodes(live(cluster), partition)
        if seen is not None:
            seen.extend((n.name, p["state"]) for n, p in serving)
        if len(serving) > 1:
            # The nodes were asked one after another, so a hand-over that happened between two
            # answers shows both. Ask again in the reverse order: a node seen serving before and
            # after the others were is an overlap, a double owner.
            again = serving_nodes([n for n, _ in reversed(serving)], partition)
            assert len(again) <= 1, f"partition {partition} served by {[(n.name, p) for n, p in serving]}, " \
                                    f"then by {[(n.name, p) for n, p in again]}"
            continue
        if serving and serving[0][1]["state"] == "active":
            return serving[0][0], serving[0][1]["epoch"]
        time.sleep(0.2)
    raise AssertionError("no node serves the partition")


def serving_nodes(nodes, partition):
    """(node, partition entry) of each of `nodes` whose diagnostics say it serves `partition`: has
    it open with a current lease (`confirmed`). A node that has it open without one serves
    nothing: an old owner cut off or frozen keeps its table until it learns it lost the partition,
    and answers 503 meanwhile (docs/ARCHITECTURE.md "Silent owners"). Asked in the order given."""
    serving = []
    for n in nodes:
        try:
            parts = http(n, "GET", "/_locks/_node/diagnostics", timeout=5).json()["core"]["partitions"]
        except (requests.RequestException, KeyError):
            continue
        serving += [(n, p) for p in parts if p["id"] == partition and p.get("confirmed", True)]
    return serving


def live(cluster):
    return [n for n in cluster.nodes if n.process is not None and n.process.poll() is None]


MOVE_BOUND_S = 180


def move_partition(cluster, to):
    """Moves partition 0 to `to` (reroute) and waits until `to` serves it; answers the states
    `to` was seen in meanwhile (a planned move must never pass through "grace"). The bound is
    for liveness only (a relocation is Elasticsearch's peer recovery, which a loaded CI machine
    has stretched past a minute); the safety check, one owner at a time, is `owner_of_partition`'s.
    A relocation that ended without moving the partition (a loaded machine has seen the master
    fail the relocating owner as silent: its copy had handed off to the target, and the target's
    start took longer than `locks.failover.silent_owner`) is asked for again, and said so."""
    deadline = time.monotonic() + MOVE_BOUND_S
    seen = []
    while True:
        owner = _reroute(cluster, to, deadline)
        if owner is to:
            break
        while (owner := owner_of_partition(cluster, 0, seen)[0]) is not to and _relocating(to):
            assert time.monotonic() < deadline, _not_moved(to)
            time.sleep(0.05)
        if owner is to:
            break
        assert time.monotonic() < deadline, _not_moved(to)
        print(f"the move to {to.name} ended with {owner.name} serving; moving again", flush=True)
    # `to` as it serves now, so that `seen` has it even when no look above caught it on the way
    # (CI: the relocation did not show yet right after the reroute, and had ended by the next one).
    owner_of_partition(cluster, 0, seen)
    # Green is not enough: a relocating shard counts as green, and `to` serves from the
    # relocation's hand-off on, before the master marks the move done. The next move (from `to`)
    # would then find no started copy on it (CI saw "can't move [.locks][0], failed to find it").
    http(to, "GET", "/_cluster/health/.locks?wait_for_status=green&wait_for_no_relocating_shards=true"
         "&wait_for_no_initializing_shards=true&timeout=60s", timeout=70)
    return [state for name, state in seen if name == to.name]


def _reroute(cluster, to, deadline):
    """Asks the master to move partition 0's primary to `to`; answers the owner it asked to move
    from (`to` itself: nothing to move)."""
    while True:
        owner, _ = owner_of_partition(cluster)
        if owner is to:
            return owner
        r = http(owner, "POST", "/_cluster/reroute?metric=none", {
            "commands": [{"move": {"index": ".locks", "shard": 0, "from_node": owner.name, "to_node": to.name}}]})
        if r.status_code == 200:
            return owner
        # The balancer (or the plugin keeping copies off the master) moved the primary between
        # the look and the command, or is moving it now: look again once the cluster has settled.
        moving = "failed to find it" in r.text or "shard is not started" in r.text
        assert r.status_code == 400 and moving and time.monotonic() < deadline, r.text
        http(owner, "GET", "/_cluster/health/.locks?wait_for_no_relocating_shards=true"
             "&wait_for_no_initializing_shards=true&timeout=30s", timeout=40)


def _not_moved(to) -> str:
    return f"partition did not move to {to.name} in {MOVE_BOUND_S} s: {http(to, 'GET', '/_cat/shards/.locks?v').text}"


def _relocating(node) -> bool:
    """Whether a copy of `.locks` is still relocating or initializing, as `node` sees it (true when
    it cannot answer: the look is repeated)."""
    try:
        health = http(node, "GET", "/_cluster/health/.locks", timeout=5).json()
        return health["relocating_shards"] > 0 or health["initializing_shards"] > 0
    except (requests.RequestException, KeyError, ValueError):
        return True


def native_bound_ms(name: str) -> int:
    """A bound of the ownership protocol as the bridge's header has it (`ESLM_BOUND_<name>`,
    written from rust/lock-core/src/ownership/bounds.rs), so that no test copies the number."""
    header = (Path(__file__).resolve().parents[2] / "rust" / "lock-jni" / "include" / "eslm.h").read_text()
    match = re.search(rf"#define ESLM_BOUND_{name} (\d+)", header)
    assert match, f"ESLM_BOUND_{name} is not in the header"
    return int(match.group(1))


def started_primary_in_state_of(node, session=requests, timeout=10) -> str | None:
    """The name of the node holding partition 0's started primary in `node`'s own cluster state
    (`local=true`: what that node routes by; the elected master's is the one a reroute acts on,
    and a node that was cut off may still hold an older one), or None. `session` and `timeout`
    are the caller's (a nemesis's session with its own timeouts)."""
    try:
        state = session.get(node.url + "/_cluster/state/routing_table,nodes/.locks?local=true", timeout=timeout).json()
        copies = state["routing_table"]["indices"][".locks"]["shards"]["0"]
        names = {node_id: n["name"] for node_id, n in state["nodes"].items()}
    except (requests.RequestException, ValueError, KeyError, TypeError):
        return None
    return next((names.get(c["node"]) for c in copies if c["primary"] and c["state"] == "STARTED"), None)


def primary_term_in_state_of(node, session=requests, timeout=10) -> int | None:
    """Partition 0's primary term in `node`'s own cluster state, or None."""
    try:
        r = session.get(node.url + "/_cluster/state/metadata/.locks?local=true"
                        "&filter_path=metadata.indices.*.primary_terms", timeout=timeout)
        (index,) = r.json()["metadata"]["indices"].values()
        return int(index["primary_terms"]["0"])
    except (requests.RequestException, ValueError, KeyError, TypeError):
        return None


def term_rises(node, term: int, within_s: float, session=requests, timeout=10) -> bool:
    """Whether `node` applies a state with partition 0's primary term above `term` within
    `within_s` (polled; a node applies a committed state before the master does, which applies
    it only once its publication has ended)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        now = primary_term_in_state_of(node, session, timeout)
        if now is not None and now > term:
            return True
        time.sleep(0.02)
    return False


def reroute_once(master, command: dict, answer_s: float, session=requests, connect_s=10) -> tuple[int | str, str]:
    """One reroute `command` sent to `master` and never again (sent again through another node, a
    `cancel` that took effect finds no copy and is refused): (the status or the error's name, the
    start of the answer and how long it took). Answered once committed, not acknowledged
    (`timeout=100ms`); the master may still answer only when its publication ends."""
    started = time.monotonic()
    try:
        r = session.post(master.url + "/_cluster/reroute?metric=none&timeout=100ms", json={"commands": [command]},
                         timeout=(connect_s, answer_s))
        return r.status_code, f"{r.text[:300]} after {time.monotonic() - started:.2f}s"
    except requests.RequestException as e:
        return type(e).__name__, f"{str(e)[:300]} after {time.monotonic() - started:.2f}s"


def master_name(node):
    return http(node, "GET", "/_cat/master?format=json").json()[0]["node"]


def current_master(node):
    """The elected master's name as `node` sees it, or None while it knows of none."""
    try:
        r = http(node, "GET", "/_cat/master?format=json", timeout=5)
        return r.json()[0]["node"] if r.status_code == 200 else None
    except (requests.RequestException, KeyError, IndexError, ValueError):
        return None


def granted_by_the_new_owner(node, k, old_token):
    """While the old owner is frozen: asks `node` for `k` as "new" until the failed-over partition
    grants it (within 90 s), and checks the grant's epoch is above the old holder's."""
    deadline = time.monotonic() + 90
    r = None
    while time.monotonic() < deadline:
        r = http(node, "POST", f"/_locks/{k}/_acquire", {"owner": "new", "acquisition": "new", "wait": "20s"}, timeout=60)
        if r.status_code == 200:
            break
    assert r is not None and r.status_code == 200, r.text if r is not None else "no answer"
    new = r.json()
    assert new["fencing_token"] >> 40 > old_token >> 40
    return new


def first_grant_while_frozen(via, key, frozen_at, within_s):
    """Asks `via` for `key` until granted (each ask waits up to 5 s), for at most `within_s` from
    `frozen_at` (a node's freeze): the answer and how long after the freeze it came."""
    deadline = frozen_at + within_s
    r = None
    while time.monotonic() < deadline:
        try:
            r = http(via, "POST", f"/_locks/{key}/_acquire",
                     {"owner": "during-freeze", "acquisition": "during-freeze", "wait": "5s"}, timeout=15)
        except requests.RequestException:
            continue
        if r.status_code == 200:
            return r.json(), time.monotonic() - frozen_at
        assert r.status_code in (409, 503), r.text
    raise AssertionError(f"no grant within {within_s}s of the freeze: {r.text if r is not None else 'no answer'}")


def nodes_with_a_copy(node, partition=0) -> set[str]:
    """The names of the nodes holding a copy of `partition` (its primary or a replica), as `node`
    lists the shards of `.locks`."""
    shards = http(node, "GET", "/_cat/shards/.locks?format=json&h=shard,prirep,node").json()
    return {s["node"] for s in shards if s["shard"] == str(partition)}


def owner_that_is_not_the_master(cluster):
    """(owner, epoch, master) with the partition's owner not the elected master: moved to a node
    with no copy that is not the master when it has to be (a three-node cluster always has one).
    First no move under way (the copies leaving a newly elected master): it would name the move's
    source, which hands the partition over in the same epoch a moment later (seen in CI: the test
    froze the source and the target granted in epoch 1). Green is not waited for: a test may call
    this with a node down."""
    r = http(live(cluster)[0], "GET", "/_cluster/health?wait_for_no_relocating_shards=true"
                                      "&wait_for_events=languid&timeout=60s", timeout=70)
    assert r.status_code == 200 and not r.json()["timed_out"], r.text
    owner, epoch = owner_of_partition(cluster)
    master = master_name(owner)
    if owner.name == master:
        with_copy = nodes_with_a_copy(owner)
        free = [n for n in live(cluster) if n.name not in with_copy and n.name != master]
        if not free:
            pytest.skip("no node without a copy besides the master")
        move_partition(cluster, free[0])
        owner, epoch = owner_of_partition(cluster)
    assert owner.name != master
    return owner, epoch, cluster.node(master)


@contextlib.contextmanager
def no_rebalancing(cluster):
    """No shard rebalancing while the test runs (restored afterwards): the balancer may move the
    lock partition back after `owner_that_is_not_the_master` moved it, and a planned move racing
    the test's own event is not what the test is about. Explicit moves and the promotion of a
    replica after a node failure still happen."""
    r = http(cluster.nodes[0], "PUT", "/_cluster/settings", {"persistent": {"cluster.routing.rebalance.enable": "none"}})
    assert r.status_code == 200, r.text
    try:
        yield
    finally:
        answers = []
        for n in live(cluster):  # the node frozen or killed by the test may still be rejoining
            try:
                r = http(n, "PUT", "/_cluster/settings", {"persistent": {"cluster.routing.rebalance.enable": None}})
            except requests.RequestException as e:
                answers.append(str(e))
                continue
            if r.status_code == 200:
                break
            answers.append(r.text)
        else:
            raise AssertionError(f"rebalancing not restored: {answers}")


def settled(node):
    """Green, nothing relocating, and the master idle: `wait_for_events=languid` returns once the
    master has run every task queued before it, so no cluster state is being published when a test
    injects its fault (a publication in flight to a node that then freezes holds the next one, the
    failover's, for `cluster.publish.timeout`: docs/ARCHITECTURE.md "Silent owners")."""
    r = http(node, "GET", "/_cluster/health?wait_for_no_relocating_shards=true&wait_for_status=green"
                          "&wait_for_events=languid&timeout=60s",
             timeout=70)
    assert r.status_code == 200 and not r.json()["timed_out"], r.text


@contextlib.contextmanager
def default_lease_settings(node):
    """The module's cluster shortens leases for its failover tests; the election tests run with
    the plugin's defaults (locks.lease.default 30s, locks.lease.max 10m) as persistent cluster
    settings, so no lease can run out during the election and hide a lost holder. Raised max
    first and reset default first: the default never exceeds the max."""
    for name, value in (("locks.lease.max", "10m"), ("locks.lease.default", "30s")):
        r = http(node, "PUT", "/_cluster/settings", {"persistent": {name: value}})
        assert r.status_code == 200, r.text
    try:
        yield
    finally:
        for name in ("locks.lease.default", "locks.lease.max"):
            r = http(node, "PUT", "/_cluster/settings", {"persistent": {name: None}})
            assert r.status_code == 200, r.text


class RenewRecorder:
    """Renews one held lock through one node in a loop, recording every answer's status (or the
    transport error), until stopped."""

    def __init__(self, node, key, owner):
        self.node, self.key, self.owner = node, key, owner
        self.statuses: list = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        s = requests.Session()
        while not self.stop.is_set():
            try:
                r = s.post(f"{self.node.url}/_locks/{self.key}/_renew", json={"owner": self.owner, "acquisition": self.owner}, timeout=30)
                self.statuses.append(r.status_code if r.status_code == 200 else (r.status_code, r.text[:300]))
            except requests.RequestException as e:
                self.statuses.append(("error", str(e)[:300]))
            time.sleep(0.02)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(60)


def keys_in_partition(node, partition, prefix, n):
    """`n` fresh keys whose partition is `partition`, found by asking: each candidate is taken
    once by a probe owner, listed (the listing names its partition) and released."""
    keys = []
    for i in range(200):
        k = f"{prefix}-{uuid.uuid4().hex[:6]}-{i}"
        r = http(node, "POST", f"/_locks/{k}/_acquire", {"owner": "probe", "acquisition": "probe"})
        assert r.status_code == 200, r.text
        # A listing answers 503 while a partition has no confirmed owner (docs/API.md `GET /_locks`,
        # "Whole or 503"): right after a move its new owner may not have the master's word yet.
        listed = wait_until(lambda: served(node, f"/_locks?prefix={k}"), 30, 0.1,
                            message=f"a listing of {k}")["locks"]
        assert http(node, "POST", f"/_locks/{k}/_release", {"owner": "probe", "acquisition": "probe"}).status_code == 200
        if [l["partition"] for l in listed] == [partition]:
            keys.append(k)
            if len(keys) == n:
                return keys
    raise AssertionError(f"no {n} keys of partition {partition} among 200")


def hold_locks_before_an_election(owner, via, keys=None):
    """Issues tokens on a key (granted five times), then holds two keys; answers what the
    election must keep: the holders with their tokens, and every token issued. `keys` are the
    counted key and the two held ones (default: fresh names, for a one-partition cluster)."""
    tag = uuid.uuid4().hex[:6]
    counted, h1, h2 = keys or (f"elect-count-{tag}", f"elect-h1-{tag}", f"elect-h2-{tag}")
    tokens = []
    for _ in range(5):
        r = http(via, "POST", f"/_locks/{counted}/_acquire", {"owner": "counter", "acquisition": "counter"})
        assert r.status_code == 200, r.text
        tokens.append(r.json()["fencing_token"])
        assert http(via, "POST", f"/_locks/{counted}/_release", {"owner": "counter", "acquisition": "counter"}).status_code == 200
    held = {}
    for k, who in ((h1, "holder-1"), (h2, "holder-2")):
        r = http(via, "POST", f"/_locks/{k}/_acquire", {"owner": who, "acquisition": who})
        assert r.status_code == 200, r.text
        held[k] = (who, r.json()["fencing_token"])
        tokens.append(r.json()["fencing_token"])
    assert tokens == sorted(tokens)
    return counted, held, tokens


def assert_the_election_changed_nothing(cluster, owner, epoch, counted, held, tokens, statuses):
    """After an election: same owner in the same epoch, every holder still holding with its
    token, renew works through every node, the next grant outranks every earlier token, and the
    owner never answered anything but 200 to the renews sent during the election."""
    failed = [s for s in statuses if s != 200]
    assert statuses and failed == [], f"{len(failed)} of {len(statuses)} renews failed: {failed[:5]}"
    assert owner_of_partition(cluster) == (owner, epoch), "same owner, same primary term"
    for k, (who, token) in held.items():
        for n in live(cluster):
            info = http(n, "GET", f"/_locks/{k}").json()
            assert [(h["owner"], h["fencing_token"]) for h in info["holders"]] == [(who, token)], info
            r = http(n, "POST", f"/_locks/{k}/_renew", {"owner": who, "acquisition": who})
            assert r.status_code == 200, r.text
    r = http(live(cluster)[0], "POST", f"/_locks/{counted}/_acquire", {"owner": "after", "acquisition": "after"})
    assert r.status_code == 200, r.text
    after = r.json()["fencing_token"]
    assert after > max(tokens), f"token {after} after the election, {max(tokens)} issued before"
    http(live(cluster)[0], "POST", f"/_locks/{counted}/_release", {"owner": "after", "acquisition": "after"})
    for k, (who, _) in held.items():
        assert http(owner, "POST", f"/_locks/{k}/_release", {"owner": who, "acquisition": who}).status_code == 200


def master_in_local_state(node):
    """The master named in `node`'s own applied cluster state (`local=true`: nothing is forwarded
    to a master), "none" when it knows of none, or why it could not be asked."""
    try:
        r = http(node, "GET", "/_cluster/state/master_node,nodes?local=true", timeout=5)
    except requests.RequestException as e:
        return type(e).__name__
    if r.status_code != 200:
        return f"HTTP {r.status_code}"
    state = r.json()
    master = state.get("master_node")
    return state["nodes"].get(master, {}).get("name", master) if master else "none"


def wait_for_new_master(node, old_name, timeout=60, cluster=None):
    """The name of a master other than `old_name`, as `node` sees it, within `timeout` seconds.
    When none comes, the failure says which master each node of `cluster` has in its own state
    (an election that never ran looks different from one whose result `node` never applied)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = current_master(node)
        if m is not None and m != old_name:
            return m
        time.sleep(0.1)
    views = {n.name: master_in_local_state(n) for n in live(cluster)} if cluster is not None else {}
    raise AssertionError(f"no new master within {timeout}s after {old_name} left; each node's own state names: {views}")
