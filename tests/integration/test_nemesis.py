"""A randomized fault test (docs/RELIABILITY.md): worker threads take and release a few keys
through random nodes of a three-node cluster while a nemesis kills -9, freezes (SIGSTOP/SIGCONT),
restarts, relocates the lock partition and forces master elections; every operation goes into a
history on one clock (tests/integration/history.py), and the checker proves afterwards that no
two owners held a key at once and that tokens rose per key.

Seeded and bounded: `ESLM_NEMESIS_SEED` (else a random seed, printed) fixes the nemesis's
schedule and the workers' choices (not the cluster's own timing); `ESLM_NEMESIS_SECONDS`
(default 75) is how long faults are injected. A long run:

    ESLM_NEMESIS_SECONDS=600 ESLM_NEMESIS_SEED=1 python3 -m pytest tests/integration/test_nemesis.py -v -s

The history of the last run is left in build/eslm-it-nemesis/history.jsonl for a post-mortem."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import threading
import time

import pytest
import requests
import urllib3

import node as esnode
from cluster_kit import FAST_FAULT_DETECTION
from history import ACQUIRE, RELEASE, History, check

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("ESLM_NEMESIS_SEED") or random.SystemRandom().randrange(2**31))
SECONDS = float(os.environ.get("ESLM_NEMESIS_SECONDS") or 75)
WORKERS = 6
KEYS = [f"nemesis-{i}" for i in range(3)]
LEASE_MAX_S = 8
GRACE_S = 10
LEASE_S = 5  # each grant's lease: longer than a hold and a wait, shorter than the max
WAIT_S = 3
CONNECT_S = 2
ANSWER_S = WAIT_S + 7  # an acquire's answer may take its wait plus a slow hop or two
ADMIN_S = 15
PAUSE_MAX_S = 10  # longest SIGSTOP
# Longest a key may go without a grant: a frozen owner (PAUSE_MAX_S), fault detection (a few
# seconds, FAST_FAULT_DETECTION), a lease held by a client whose node froze (LEASE_S), slack.
GAP_BOUND_S = 30
HEAL_S = 180  # a node restarted on a loaded two-core machine may take minutes to rejoin
CLUSTER = "eslm-it-nemesis"


@pytest.fixture(scope="module")
def cluster():
    """Three nodes with the plugin's defaults except: a short `locks.lease.max` (and a default
    lease under it) and `locks.recovery.grace`, so a failed-over partition serves again within
    seconds instead of 10 min 30 s (the default grace is lease.max + 30 s), and fault detection
    within a few seconds (as in test_cluster.py), so a frozen node is noticed while it is frozen."""
    c = esnode.Cluster(CLUSTER, 3, extra_settings={
        "locks.lease.max": f"{LEASE_MAX_S}s",
        "locks.lease.default": f"{LEASE_S}s",
        "locks.recovery.grace": f"{GRACE_S}s",
        **FAST_FAULT_DETECTION,
    })
    try:
        c.start()  # inside: a node that failed to start must not leave the others running
        yield c
    finally:
        for n in c.nodes:
            n.thaw()  # a frozen JVM would never act on SIGTERM
        c.stop()


def running(cluster) -> list:
    """Nodes whose process is up (a frozen one included: it is up, just silent)."""
    return [n for n in cluster.nodes if n.process is not None and n.process.poll() is None]


def never_sent(e: requests.RequestException) -> bool:
    """No connection was made (refused: the node is down or still starting; or the connect timed
    out), so the request never left: a certain failure, unlike a reset or a read timeout."""
    if isinstance(e, requests.ConnectTimeout):
        return True
    reason = getattr(e.args[0] if e.args else None, "reason", None)
    return isinstance(reason, urllib3.exceptions.NewConnectionError)


def outcome(history: History, op, response: requests.Response):
    """Records an answer: 200 happened; a 4xx or 503 (unavailable, retryable) certainly did not;
    any other status may or may not have happened. Returns the body of a 200, else None."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code == 200:
        return body
    error = body.get("error") if isinstance(body, dict) else None
    status = f"{response.status_code} {error.get('type') if isinstance(error, dict) else ''}".strip()
    definite = 400 <= response.status_code < 500 or response.status_code == 503
    (history.fail if definite else history.info)(op, status=status)
    return None


class Worker:
    """One owner taking random keys through random nodes: acquire (queued up to WAIT_S), hold a
    moment, release by token. An acquire whose outcome is unknown is followed by a release
    without a token, so a grant nobody heard of does not block the key for a whole lease."""

    def __init__(self, index: int, cluster, history: History, stop: threading.Event):
        self.owner = f"w{index}"
        self.cluster, self.history, self.stop = cluster, history, stop
        self.rng = random.Random(f"{SEED}-{self.owner}")
        self.http = requests.Session()
        self.thread = threading.Thread(target=self.run, name=self.owner, daemon=True)

    def run(self) -> None:
        while not self.stop.is_set():
            key = self.rng.choice(KEYS)
            granted, token = self.acquire(key)
            if granted:
                time.sleep(self.rng.uniform(0.01, 0.2))  # the critical section
            if granted or granted is None:
                self.release(key, token)
            if not granted:
                time.sleep(self.rng.uniform(0.05, 0.2))  # back off: the node may be down or starting

    def node(self, avoid=()):
        nodes = [n for n in running(self.cluster) if n not in avoid] or self.cluster.nodes
        return self.rng.choice(nodes)

    def post(self, op, node, path: str, body: dict, timeout: float):
        """One request, recorded: the body of a 200, or None (outcome recorded as fail/info)."""
        try:
            r = self.http.post(node.url + path, json=body, timeout=(CONNECT_S, timeout))
        except requests.RequestException as e:
            if never_sent(e):
                self.history.fail(op, status="not connected")
            else:
                self.history.info(op, status=type(e).__name__)
            return None
        return outcome(self.history, op, r)

    def acquire(self, key: str):
        """(True, token) when granted, (False, None) when certainly not, (None, None) when
        unknown."""
        node = self.node()
        op = self.history.invoke(self.owner, ACQUIRE, key=key, owner=self.owner, lease_s=LEASE_S, node=node.name)
        body = self.post(op, node, f"/_locks/{key}/_acquire",
                         {"owner": self.owner, "wait": f"{WAIT_S}s", "lease": f"{LEASE_S}s"}, ANSWER_S)
        if body is None:
            return (None if op.type == "info" else False), None
        self.history.ok(op, token=body["fencing_token"], status="200",
                        detail="reentrant" if body.get("reentrant") else None)
        return True, body["fencing_token"]

    def release(self, key: str, token: int | None) -> None:
        """Up to three tries, each through a node not tried yet, while the answer is unknown,
        503 or no connection; a 404 (lease expired, or lost in a failover) ends it."""
        tried = []
        for _ in range(3):
            node = self.node(avoid=tried)
            tried.append(node)
            op = self.history.invoke(self.owner, RELEASE, key=key, owner=self.owner, token=token, node=node.name)
            body = {"owner": self.owner} if token is None else {"owner": self.owner, "fencing_token": token}
            if self.post(op, node, f"/_locks/{key}/_release", body, ADMIN_S) is not None:
                self.history.ok(op, status="200")
                return
            if op.type == "fail" and not op.status.startswith(("503", "not connected")):
                return


class Nemesis:
    """One fault at a time, chosen by the seeded generator every few seconds, each healed before
    the next (SIGCONT, a killed or stopped node started again, voting exclusions cleared), and
    the next one only once the cluster has three nodes and the lock partition both copies: a
    majority of master-eligible nodes is never lost."""

    KINDS = ("kill", "pause", "restart", "move", "elect")

    def __init__(self, cluster, history: History, stop: threading.Event):
        self.cluster, self.history, self.stop = cluster, history, stop
        self.rng = random.Random(f"{SEED}-nemesis")
        self.http = requests.Session()
        self.thread = threading.Thread(target=self.run, name="nemesis", daemon=True)
        self.errors: list[str] = []

    def run(self) -> None:
        while not self.stop.wait(self.rng.uniform(2, 5)):
            if not self.settled(until_stop=True):
                break
            kind = self.rng.choice(self.KINDS)
            op = self.history.invoke("nemesis", kind)
            try:
                self.history.ok(op, **getattr(self, kind)())
            except Exception as e:  # noqa: BLE001 - a fault that went wrong is reported, then healed
                self.history.info(op, status=type(e).__name__, detail=str(e)[:300])
                self.errors.append(str(op))
            finally:
                self.heal()

    # -- cluster facts, asked of a node that is up and not the fault's target -----------------

    def admin(self, method: str, path: str, body=None, avoid=None, timeout: float = ADMIN_S):
        nodes = [n for n in running(self.cluster) if n is not avoid] or self.cluster.nodes
        last = None
        for n in nodes:
            try:
                r = self.http.request(method, n.url + path, json=body, timeout=(CONNECT_S, timeout))
                if r.status_code < 500:
                    return r
                last = r.text[:300]
            except requests.RequestException as e:
                last = str(e)[:300]
        raise RuntimeError(f"{method} {path}: no node answered ({last})")

    def master(self, avoid=None) -> str | None:
        """The elected master's name, or None while there is none (during an election
        `_cat/master` answers 500 on every node: Elasticsearch looks up a null master id)."""
        try:
            rows = self.admin("GET", "/_cat/master?format=json", avoid=avoid).json()
        except (RuntimeError, ValueError):
            return None
        return rows[0]["node"] if isinstance(rows, list) and rows else None

    def copies(self) -> list[dict]:
        """The copies of `.locks` shard 0 (partition 0): node, primary or replica, state."""
        rows = self.admin("GET", "/_cat/shards/.locks?format=json&h=shard,prirep,node,state").json()
        return [r for r in rows if r["shard"] == "0"]

    def target(self):
        """The node to hurt: half the time the lock partition's owner (the interesting case),
        else any node. Returns it with its roles, for the report."""
        primary = [c["node"] for c in self.copies() if c["prirep"] == "p"]
        node = (self.cluster.node(primary[0]) if primary and self.rng.random() < 0.5
                else self.rng.choice(self.cluster.nodes))
        roles = [r for r, name in (("owner", primary[0] if primary else None), ("master", self.master()))
                 if name == node.name]
        return node, f"{node.name} ({', '.join(roles) or 'neither owner nor master'})"

    # -- the faults: each returns what the history records about it ---------------------------

    def kill(self) -> dict:
        node, who = self.target()
        node.kill()
        time.sleep(self.rng.uniform(1, 6))  # down for a while: the cluster notices, fails over
        self.start(node)
        return {"node": node.name, "detail": f"kill -9 {who}"}

    def restart(self) -> dict:
        node, who = self.target()
        node.stop(timeout=30)
        self.start(node)
        return {"node": node.name, "detail": f"restart {who}"}

    def pause(self) -> dict:
        node, who = self.target()
        seconds = self.rng.uniform(1, PAUSE_MAX_S)  # sometimes shorter, sometimes longer than detection
        node.freeze()
        try:
            time.sleep(seconds)
        finally:
            node.thaw()
        return {"node": node.name, "detail": f"SIGSTOP {who} for {seconds:.1f}s"}

    def move(self) -> dict:
        """A planned move of the partition's primary to the node holding no copy."""
        copies = self.copies()
        primary = [c["node"] for c in copies if c["prirep"] == "p" and c["state"] == "STARTED"]
        free = [n.name for n in self.cluster.nodes if n.name not in {c["node"] for c in copies}]
        if not primary or not free:
            return {"detail": f"no move possible: {copies}"}
        to = self.rng.choice(free)
        r = self.admin("POST", "/_cluster/reroute?metric=none", {"commands": [{"move": {
            "index": ".locks", "shard": 0, "from_node": primary[0], "to_node": to}}]})
        assert r.status_code == 200, r.text
        return {"node": primary[0], "detail": f"move {primary[0]} -> {to}"}

    def elect(self) -> dict:
        """What a rolling restart does: the master is excluded from voting, a new one is elected."""
        old = self.master()
        if old is None:
            return {"detail": "no master to replace"}
        r = self.admin("POST", f"/_cluster/voting_config_exclusions?node_names={old}&timeout=30s", timeout=40)
        assert r.status_code == 200, r.text
        deadline = time.monotonic() + 30
        new = old
        while new in (old, None) and time.monotonic() < deadline:
            time.sleep(0.2)
            new = self.master(avoid=self.cluster.node(old))
        return {"node": old, "detail": f"master {old} -> {new}"}

    # -- healing -------------------------------------------------------------------------------

    def start(self, node) -> None:
        node.start()
        node.wait_until_ready(timeout=HEAL_S)

    def heal(self) -> None:
        """Whatever the fault left behind: frozen JVMs resumed, dead nodes started, no voting
        exclusion left."""
        try:
            for n in self.cluster.nodes:
                n.thaw()
                if n.process is None or n.process.poll() is not None:
                    self.start(n)
            r = self.admin("DELETE", "/_cluster/voting_config_exclusions?wait_for_removal=false")
            assert r.status_code == 200, r.text
        except Exception as e:  # noqa: BLE001 - reported; `settled` decides whether to go on
            self.errors.append(f"heal: {type(e).__name__}: {str(e)[:300]}")

    def settled(self, until_stop: bool = False) -> bool:
        """Three nodes and both copies of the partition started, nothing relocating: waited for
        (bounded by HEAL_S, or until the test stops when `until_stop`)."""
        deadline = time.monotonic() + HEAL_S
        path = "/_cluster/health/.locks?wait_for_nodes=3&wait_for_status=green&wait_for_no_relocating_shards=true&timeout=5s"
        while time.monotonic() < deadline and not (until_stop and self.stop.is_set()):
            try:
                r = self.admin("GET", path, timeout=10)
                if r.status_code == 200 and not r.json()["timed_out"]:
                    return True
            except (RuntimeError, ValueError):
                time.sleep(1)
        return False


def save(history: History) -> None:
    """The history as JSON lines, for a post-mortem of the last run."""
    with (esnode.BUILD / CLUSTER / "history.jsonl").open("w") as f:
        for op in history.ops():
            f.write(json.dumps(dataclasses.asdict(op)) + "\n")


def test_no_overlapping_holds_and_rising_tokens_under_faults(cluster):
    print(f"\nnemesis seed {SEED} (ESLM_NEMESIS_SEED={SEED} reproduces the schedule), {SECONDS:.0f}s of faults",
          flush=True)
    history, stop = History(), threading.Event()
    nemesis = Nemesis(cluster, history, stop)
    workers = [Worker(i, cluster, history, stop) for i in range(WORKERS)]
    for t in [w.thread for w in workers] + [nemesis.thread]:
        t.start()
    stop.wait(SECONDS)
    stop.set()
    history.end()  # availability is measured while the workers were asking
    for w in workers:
        w.thread.join(ANSWER_S + 3 * (ADMIN_S + CONNECT_S) + 10)
    nemesis.thread.join(HEAL_S * 2 + 60)  # a fault in progress finishes and heals
    stuck = [t.name for t in [nemesis.thread, *(w.thread for w in workers)] if t.is_alive()]
    for n in cluster.nodes:
        n.thaw()
    save(history)
    report = check(history, keys=KEYS)
    print(f"seed {SEED}\n" + report.summary(origin=history.started), flush=True)
    for op in history.ops():
        if op.process == "nemesis":
            print(f"  fault at {op.invoke - history.started:6.1f}s for {(op.complete or op.invoke) - op.invoke:5.1f}s: "
                  f"{op.f} {op.type} {op.detail or ''} {op.status or ''}", flush=True)
    for e in nemesis.errors:
        print(f"  nemesis error: {e}", flush=True)
    assert report.violations == [], f"seed {SEED}: " + report.summary(origin=history.started)
    assert not stuck, f"seed {SEED}: threads still running after the deadline: {stuck}"
    assert nemesis.settled(), f"seed {SEED}: the cluster did not heal within {HEAL_S}s"
    assert report.counts["grants"] > 0 and sum(report.faults.values()) > 0, "the run proved nothing"
    # Availability: with replicated lock state no fault waits for a recovery grace. The worst
    # case is a frozen owner: up to PAUSE_MAX_S silent, then fault detection and promotion.
    longest = max((g.seconds for g in report.gaps.values()), default=0.0)
    assert longest <= GAP_BOUND_S, f"seed {SEED}: a key went {longest:.1f}s without a grant"
