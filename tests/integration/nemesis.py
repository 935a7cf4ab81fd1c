"""The nemesis of the fault test (docs/RELIABILITY.md "The run"): one fault at a time on a
three-node cluster (four for the relocation faults, where a node holding no copy can take the
partition), chosen by a seeded schedule, recorded in the history with what it hit, and healed
before the next. Faults do not wait for a settled cluster: one may land while a copy of the lock
partition recovers or relocates. What they never do is take away a majority of master-eligible
nodes: a fault that takes a node away waits until every other node is in the cluster.

Only effective faults count: a fault that could not be made (no node to move the partition to,
no master to replace) is recorded as `info` with the status `no-op`, and the run's minimums
(`REQUIRED`) count faults whose target was what they were meant to hit."""

from __future__ import annotations

import random
import threading
import time

import requests

import netcut
from cluster_kit import primary_term_in_state_of, reroute_once, started_primary_in_state_of, term_rises

CONNECT_S = 2
ADMIN_S = 15
HEAL_S = 180  # a node restarted on a loaded two-core machine may take minutes to rejoin
PAUSE_S = (2, 40)  # SIGSTOP: shorter and longer than Elasticsearch's fault detection (~30 s)
# SIGSTOP around the plugin's own bounds (docs/ARCHITECTURE.md "Silent owners"): the 0.8 s copy
# lease, the master's 3.5 s silent-owner failover and the promoted copy's wait, so that a resume
# lands just before and just after a failover.
PAUSE_AROUND_S = (2, 8)
CUT_S = (8, 40)  # network partitions, as the issue asks
# Brief pauses and cuts (`brief_pause`, `short_partition`) that end on either side of the bounds
# below the master's: the owner's 0.8 s copy lease and the promoted copy's 0.817 s wait, a copy's
# 1.2 s to answer a batch before it is failed, the master's 1 s gap between its looks, and the 3.5 s
# `locks.failover.silent_owner` (docs/ARCHITECTURE.md "Silent owners").
AROUND_S = (0.5, 5)
# A failover faster than the master's silence bound (`fast_failover`): the old owner's cut lasts this
# long after it was resumed inside its lease, past the promoted copy's wait.
FAST_CUT_S = (2, 8)
# fast_failover: how long the reroute may take to reach the third node (the owner stays frozen
# meanwhile: past its 800 ms lease the wait decides nothing, and the fault says so), and how long
# its answer may take (the master's publication waits for the frozen node: cluster.publish.timeout).
FAILOVER_SEEN_S = 2
REROUTE_ANSWER_S = 45
DOWN_S = (1, 6)  # kill -9: down this long before it is started again
# The relocation faults (`move_pause`, `move_kill`): how long a planned move may take to show as
# relocating, and when after that the fault lands: before, during or just after the hand-over
# (a first run saw the move of a small partition still relocating 0.03 and 0.09 s after it
# showed, and over 0.45 s after).
MOVE_SEEN_S = 10
MOVE_LANDS_S = (0, 0.8)
# After a partition heals, a recovering replica has its owner's whole state within this, counted
# from when its recovery asked for it (the plugin's share of the recovery; the time from the heal
# until .locks is green, mostly Elasticsearch's and TCP's, is reported beside it and bounded by
# HEAL_S).
HEALED_WITHIN_S = 10
GREEN_EVERY_S = 0.5  # how often `watch_green` reads the health of `.locks`
NO_RECOVERY = -1.0  # a heal after which the replica needed no recovery (see healed_after_cut)

# (kind, target) every run must have made, effectively, at least once; the schedule puts them
# first in each round (in a seeded order), then the rest.
REQUIRED = [("kill", "owner"), ("pause", "owner"), ("partition", "owner"), ("elect", "master"),
            ("short_pause", "owner"), ("short_pause", "master"), ("pause_both", "owner"),
            ("fast_failover", "owner"), ("short_partition", "owner"), ("short_partition", "replica"),
            ("brief_pause", "replica")]
OPTIONAL = [("partition", "master"), ("restart", "owner"), ("move", "owner"), ("kill", "any"),
            ("pause", "any"), ("partition", "any"), ("short_partition", "master"), ("brief_pause", "owner"),
            ("brief_pause", "master")]
# On four nodes (tests/integration/test_nemesis_moves.py) moves really move: planned moves under
# load, and the move's source or target frozen around the plugin's bounds or killed during it.
REQUIRED_MOVES = [("move", "owner"), ("move_pause", "source"), ("move_pause", "target"),
                  ("move_kill", "source"), ("move_kill", "target")]
#: The faults that take a node away (`Nemesis.others_up` first).
AWAY = ("kill", "pause", "short_pause", "brief_pause", "pause_both", "restart", "partition", "short_partition",
        "fast_failover", "move_pause", "move_kill")


def running(cluster) -> list:
    """Nodes whose process is up (a frozen one included: it is up, just silent)."""
    return [n for n in cluster.nodes if n.process is not None and n.process.poll() is None]


def frozen(nodes: list, seconds: float) -> bool:
    """SIGSTOP of `nodes` together for `seconds`, then SIGCONT of each (also when interrupted);
    whether every one was frozen."""
    made = [n.freeze() for n in nodes]
    try:
        time.sleep(seconds)
    finally:
        for n in nodes:
            n.thaw()
    return all(made)


class Nemesis:
    def __init__(self, cluster, history, stop: threading.Event, seed: int, pause_between=(2, 5),
                 required: list = REQUIRED, optional: list = OPTIONAL):
        self.cluster, self.history, self.stop = cluster, history, stop
        self.required, self.optional = required, optional
        self.rng = random.Random(f"{seed}-nemesis")
        self.pause_between = pause_between
        self.http = requests.Session()
        self.thread = threading.Thread(target=self.run, name="nemesis", daemon=True)
        self.errors: list[str] = []
        # per healed partition: (seconds from the heal until .locks was green with the replica
        # holding its standby, seconds the replica's recovery waited for the whole state: None
        # when the node reported none, NO_RECOVERY when the replica did not recover since the cut)
        self.heals: list[tuple[float, float | None]] = []
        # when (history clock) `.locks` was seen green, every copy started (the replica in sync),
        # read every GREEN_EVERY_S by `watch_green` while the run lasts (history.after_faults)
        self.green_at: list[float] = []
        self.green_watch = threading.Thread(target=self.watch_green, name="nemesis-green", daemon=True)

    def schedule(self, made: set):
        """Endless (kind, target) pairs: each round the required ones first, then the others. A
        required fault that came to nothing (e.g. `pause_both` while one node was both owner and
        master) and has not been made yet is tried again after the next fault, which may change
        the roles, and after every fault until it is made, so a run does not end without it for
        want of the right moment."""
        tried = set()
        while True:
            required, optional = list(self.required), list(self.optional)
            self.rng.shuffle(required)
            self.rng.shuffle(optional)
            for fault in required + optional:
                yield fault
                tried.add(fault)
                missed = next((f for f in self.required if f in tried and f not in made and f != fault), None)
                if missed is not None:
                    yield missed

    def watch_green(self) -> None:
        """Notes each moment `.locks` is seen green, asking a node that is up (a frozen one
        costs its short timeout, then the next is asked)."""
        while not self.stop.wait(GREEN_EVERY_S):
            try:
                r = self.admin("GET", "/_cluster/health/.locks?timeout=0s", timeout=2)
                if r.status_code == 200 and r.json()["status"] == "green":
                    self.green_at.append(self.history.clock())
            except (RuntimeError, ValueError):
                pass

    def run(self) -> None:
        self.green_watch.start()
        netcut.heal_all(self.cluster.nodes)
        for n in self.cluster.nodes:
            netcut.mark(n)  # before any cut: the connections open at a cut are marked already
        made: set = set()
        plan = self.schedule(made)
        while not self.stop.wait(self.rng.uniform(*self.pause_between)):
            kind, aim = next(plan)
            if kind in AWAY and not self.others_up():
                continue  # never two nodes away at once: a majority stays
            op = self.history.invoke("nemesis", kind)
            try:
                fields = getattr(self, kind)(aim)
                if fields.pop("effective"):
                    made.add((kind, aim))
                    self.history.ok(op, **fields)
                else:
                    self.history.info(op, status="no-op", **fields)
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
        `_cat/master` answers 500 on every node)."""
        try:
            rows = self.admin("GET", "/_cat/master?format=json", avoid=avoid).json()
        except (RuntimeError, ValueError):
            return None
        return rows[0]["node"] if isinstance(rows, list) and rows else None

    def copies(self) -> list[dict]:
        """The copies of `.locks` shard 0 (partition 0): node, primary or replica, state."""
        rows = self.admin("GET", "/_cat/shards/.locks?format=json&h=shard,prirep,node,state").json()
        return [r for r in rows if r["shard"] == "0"]

    def owner(self) -> str | None:
        """The node of partition 0's primary; while it relocates, the node it moves from (which
        serves until the hand-over): `_cat/shards` then shows `<from> -> <address> <id> <to>`."""
        primary = [c["node"] for c in self.copies() if c["prirep"] == "p" and c["state"] in ("STARTED", "RELOCATING")]
        return primary[0].split(" -> ")[0] if primary else None

    @property
    def size(self) -> int:
        return len(self.cluster.nodes)

    def others_up(self) -> bool:
        """Whether every node is in the cluster (so taking one away leaves a majority);
        bounded by HEAL_S, or until the run stops."""
        deadline = time.monotonic() + HEAL_S
        while time.monotonic() < deadline and not self.stop.is_set():
            try:
                r = self.admin("GET", f"/_cluster/health?wait_for_nodes={self.size}&timeout=5s", timeout=10)
                if r.status_code == 200 and not r.json()["timed_out"]:
                    return True
            except (RuntimeError, ValueError):
                time.sleep(1)
        return False

    def replica(self) -> str | None:
        """The node of partition 0's started replica, if it has one."""
        started = [c["node"] for c in self.copies() if c["prirep"] == "r" and c["state"] == "STARTED"]
        return started[0] if started else None

    def target(self, aim: str):
        """The node to hurt and what it is: `owner` (partition 0's primary), `master`, `replica`
        (partition 0's started replica), or `any`. Answers (node, who, effective): effective is
        False when the aimed role has no node now."""
        owner, master = self.owner(), self.master()
        replica = self.replica() if aim == "replica" else None
        name = {"owner": owner, "master": master, "replica": replica}.get(aim) or self.rng.choice(self.cluster.nodes).name
        node = self.cluster.node(name)
        roles = [r for r, n in (("owner", owner), ("master", master), ("replica", replica)) if n == node.name]
        effective = aim == "any" or aim in roles
        return node, f"{node.name} ({', '.join(roles) or 'neither owner nor master'})", effective

    # -- the faults: each answers what the history records, and whether it happened -------------

    def kill(self, aim: str) -> dict:
        node, who, effective = self.target(aim)
        node.kill()
        time.sleep(self.rng.uniform(*DOWN_S))  # down for a while: the cluster notices, fails over
        self.start(node)
        return {"node": node.name, "detail": f"kill -9 {who}", "effective": effective, "status": aim}

    def restart(self, aim: str) -> dict:
        node, who, effective = self.target(aim)
        node.stop(timeout=30)
        self.start(node)
        return {"node": node.name, "detail": f"restart {who}", "effective": effective, "status": aim}

    def pause(self, aim: str) -> dict:
        return self.frozen_for(aim, PAUSE_S)

    def short_pause(self, aim: str) -> dict:
        """SIGSTOP for PAUSE_AROUND_S: the resume lands around the plugin's detection bounds."""
        return self.frozen_for(aim, PAUSE_AROUND_S)

    def brief_pause(self, aim: str) -> dict:
        """SIGSTOP for AROUND_S: the resume lands around the copy lease, a copy's answer bound and
        the master's silence bound."""
        return self.frozen_for(aim, AROUND_S)

    def frozen_for(self, aim: str, bounds: tuple[float, float]) -> dict:
        """SIGSTOP of the aimed node for a seeded time within `bounds`, then SIGCONT."""
        node, who, effective = self.target(aim)
        seconds = self.rng.uniform(*bounds)
        made = frozen([node], seconds)  # a fault that missed its aim is made all the same
        return {"node": node.name, "detail": f"SIGSTOP {who} for {seconds:.1f}s",
                "effective": effective and made, "status": aim}

    def pause_both(self, aim: str) -> dict:
        """The owner and the master frozen together for PAUSE_AROUND_S (two nodes away, briefly:
        a master frozen with the owner neither fails it over nor answers for it)."""
        owner, master = self.owner(), self.master()
        if owner is None or master is None or owner == master:
            return {"detail": f"owner {owner}, master {master}: not two nodes", "effective": False}
        nodes = [self.cluster.node(owner), self.cluster.node(master)]
        seconds = self.rng.uniform(*PAUSE_AROUND_S)
        made = frozen(nodes, seconds)
        return {"node": owner, "detail": f"SIGSTOP of the owner {owner} and the master {master} for {seconds:.1f}s",
                "effective": made, "status": aim}

    def partition(self, aim: str) -> dict:
        """The node's transport traffic cut both ways for CUT_S while clients still reach its HTTP
        port; healed, then .locks must be green with a replica holding the standby
        (`healed_after_cut`)."""
        return self.cut_for(aim, CUT_S)

    def short_partition(self, aim: str) -> dict:
        """A cut as `partition`'s for AROUND_S: healed on either side of the plugin's bounds."""
        return self.cut_for(aim, AROUND_S)

    def cut_for(self, aim: str, bounds: tuple[float, float]) -> dict:
        node, who, effective = self.target(aim)
        seconds = self.rng.uniform(*bounds)
        cut_at_ms = time.time() * 1000  # wall clock: Elasticsearch reports recoveries in epoch ms
        netcut.cut(node)
        try:
            time.sleep(seconds)
        finally:
            netcut.heal(node)
        healed, waited = self.healed_after_cut(cut_at_ms)
        self.heals.append((healed, waited))
        return {"node": node.name, "detail": f"transport of {who} cut for {seconds:.1f}s; green with a standby "
                f"{healed:.1f}s after the heal; the replica's recovery waited {waited}s for the whole state",
                "effective": effective, "status": aim}

    def fast_failover(self, aim: str) -> dict:
        """The owner frozen and its transport cut, its primary failed at once through the cluster
        reroute API (`cancel`, `allow_primary`), and the owner resumed as soon as the failure is
        committed, inside its 800 ms lease: a failover fast enough that only the promoted copy's
        wait keeps the two from serving at once (docs/ARCHITECTURE.md "Silent owners"). The cut is
        healed FAST_CUT_S later."""
        master = self.master()
        limits = {"session": self.http, "timeout": (CONNECT_S, ADMIN_S)}
        owner = None if master is None else started_primary_in_state_of(self.cluster.node(master), **limits)
        if owner is None or owner == master:
            return {"detail": f"owner {owner}, master {master}: no owner apart from the master", "effective": False}
        node, who = self.cluster.node(owner), f"{owner} (owner)"
        witness = next(n for n in self.cluster.nodes if n.name not in (owner, master))
        # A publication in flight would hold the failure back until it reached the frozen node
        # (another fault: docs/ARCHITECTURE.md "Silent owners"); this one is about a fast failover.
        self.admin("GET", "/_cluster/health?wait_for_events=languid&timeout=10s", timeout=15)
        term = primary_term_in_state_of(witness, **limits)
        answer: dict = {}
        frozen = node.freeze()
        try:
            netcut.cut(node)
            cut_at_ms = time.time() * 1000
            cancel = {"cancel": {"index": ".locks", "shard": 0, "node": node.name, "allow_primary": True}}
            # The master answers only once its publication ends, which waits for the frozen node
            # up to `cluster.publish.timeout` (30 s): sent from a thread, and the owner resumed as
            # soon as the third node has applied the committed failure (its primary term rose).
            sender = threading.Thread(target=lambda: answer.update(r=reroute_once(
                self.cluster.node(master), cancel, REROUTE_ANSWER_S, self.http, CONNECT_S)), daemon=True)
            sender.start()
            failed = term is not None and term_rises(witness, term, FAILOVER_SEEN_S, **limits)
        finally:
            node.thaw()
        seconds = self.rng.uniform(*FAST_CUT_S)
        try:
            time.sleep(seconds)
        finally:
            netcut.heal(node)
        sender.join(REROUTE_ANSWER_S + CONNECT_S + 1)
        healed, waited = self.healed_after_cut(cut_at_ms)
        self.heals.append((healed, waited))
        status, said = answer.get("r", ("no answer", ""))
        made = frozen and failed
        fields = {"node": node.name, "detail": f"SIGSTOP {who}, transport cut, primary failed by reroute "
                  f"({'committed' if failed else 'not committed'} within {FAILOVER_SEEN_S}s; answered {status}"
                  f"{'' if status == 200 else ': ' + said}), resumed at once, cut for {seconds:.1f}s more; "
                  f"green {healed:.1f}s after the heal", "effective": made}
        return {**fields, "status": aim} if made else fields

    def move(self, aim: str) -> dict:
        """A planned move of the partition's primary to a node holding no copy (not the master:
        lock copies keep off it)."""
        moved = self.start_move()
        if isinstance(moved, str):
            return {"detail": moved, "effective": False}
        source, target = moved
        return {"node": source, "detail": f"move {source} -> {target}", "effective": True, "status": aim}

    def move_pause(self, aim: str) -> dict:
        """A planned move, and its `source` or `target` frozen for PAUSE_AROUND_S from a seeded
        moment of MOVE_LANDS_S after the relocation showed."""
        return self.during_move(aim, self.frozen_now)

    def move_kill(self, aim: str) -> dict:
        """A planned move, and its `source` or `target` killed (-9) at a seeded moment of
        MOVE_LANDS_S after the relocation showed, started again DOWN_S later."""
        return self.during_move(aim, self.killed_now)

    def during_move(self, aim: str, fault) -> dict:
        moved = self.start_move()
        if isinstance(moved, str):
            return {"detail": moved, "effective": False}
        source, target = moved
        node = self.cluster.node(source if aim == "source" else target)
        lands = self.rng.uniform(*MOVE_LANDS_S)
        time.sleep(lands)
        phase = self.move_phase(source, target)
        did, what = fault(node)
        return {"node": node.name, "detail": f"move {source} -> {target}, {lands:.2f}s after it showed ({phase}): "
                f"{what} the {aim} {node.name}", "effective": did, "status": aim}

    def frozen_now(self, node) -> tuple[bool, str]:
        seconds = self.rng.uniform(*PAUSE_AROUND_S)
        return frozen([node], seconds), f"SIGSTOP for {seconds:.1f}s of"

    def killed_now(self, node) -> tuple[bool, str]:
        node.kill()
        down = self.rng.uniform(*DOWN_S)
        time.sleep(down)
        self.start(node)
        return True, f"kill -9 ({down:.1f}s down) of"

    def start_move(self) -> tuple[str, str] | str:
        """Starts a planned move of partition 0's primary, every copy started, to a node holding
        none that is not the master: (source, target) once the relocation shows (or is over), else
        why not."""
        copies, master = self.copies(), self.master()
        primary = [c["node"] for c in copies if c["prirep"] == "p"]
        if len(primary) != 1 or any(c["state"] != "STARTED" for c in copies):
            return f"no move possible, not every copy started: {copies}"
        free = [n.name for n in self.cluster.nodes if n.name not in {c["node"] for c in copies} and n.name != master]
        if not free:
            return f"no move possible, no node apart from the master holds no copy: {copies}"
        source, target = primary[0], self.rng.choice(free)
        r = self.admin("POST", "/_cluster/reroute?metric=none", {"commands": [{"move": {
            "index": ".locks", "shard": 0, "from_node": source, "to_node": target}}]})
        if r.status_code != 200:
            return f"move {source} -> {target} refused: {r.text[:200]}"
        deadline = time.monotonic() + MOVE_SEEN_S
        while self.move_phase(source, target) == "not begun":
            if time.monotonic() > deadline:
                return f"move {source} -> {target} accepted, not begun within {MOVE_SEEN_S}s"
            time.sleep(0.05)
        return source, target

    def move_phase(self, source: str, target: str) -> str:
        """Where the move of partition 0's primary from `source` to `target` is, as `_cat/shards`
        shows it: relocating, moved (the primary started on the target), or not begun."""
        for c in self.copies():
            if c["prirep"] == "p" and c["state"] == "RELOCATING" and c["node"].startswith(source + " "):
                return "relocating"
            if c["prirep"] == "p" and c["state"] == "STARTED" and c["node"] == target:
                return "moved"
        return "not begun"

    def elect(self, aim: str) -> dict:
        """What a rolling restart does: the master is excluded from voting, a new one is elected."""
        old = self.master()
        if old is None:
            return {"detail": "no master to replace", "effective": False}
        r = self.admin("POST", f"/_cluster/voting_config_exclusions?node_names={old}&timeout=30s", timeout=40)
        assert r.status_code == 200, r.text
        deadline = time.monotonic() + 30
        new = old
        while new in (old, None) and time.monotonic() < deadline:
            time.sleep(0.2)
            new = self.master(avoid=self.cluster.node(old))
        return {"node": old, "detail": f"master {old} -> {new}", "effective": new not in (old, None),
                "status": "master"}

    # -- healing -------------------------------------------------------------------------------

    def start(self, node) -> None:
        node.start()
        node.wait_until_ready(timeout=HEAL_S)

    def heal(self) -> None:
        """Whatever the fault left behind: cuts removed, frozen JVMs resumed, dead nodes started,
        no voting exclusion left."""
        try:
            for n in self.cluster.nodes:
                netcut.heal(n)
                n.thaw()
                if n.process is None or n.process.poll() is not None:
                    self.start(n)
            r = self.admin("DELETE", "/_cluster/voting_config_exclusions?wait_for_removal=false")
            assert r.status_code == 200, r.text
        except Exception as e:  # noqa: BLE001 - reported; the test's final check decides
            self.errors.append(f"heal: {type(e).__name__}: {str(e)[:300]}")

    def healed_after_cut(self, cut_at_ms: float) -> tuple[float, float | None]:
        """(seconds from now, the heal, until `.locks` is green and the replica's node holds a
        standby of partition 0, at most HEAL_S, infinite when not reached; seconds the replica's
        last recovery waited for its owner's whole state, as that node reports it, or NO_RECOVERY
        when that copy's last recovery began before the cut: its wait belongs to an earlier fault,
        e.g. a recovery from an owner that was frozen then, and this cut needed none). The first is
        mostly Elasticsearch's and TCP's: connections that carried traffic during the cut stay in
        retransmission backoff for up to ~12 s after it, and a master may have to be elected and
        the copy allocated first. The second is the plugin's share of the recovery."""
        healed = time.monotonic()
        while time.monotonic() - healed < HEAL_S:
            try:
                replica, diag = self.started_replica_diagnostics()
                if diag is not None and 0 in diag["standbys"]:
                    seconds = time.monotonic() - healed
                    if not self.replica_recovered_since(replica, cut_at_ms):
                        return seconds, NO_RECOVERY
                    waited = diag.get("standby_recovery_waits_ms", {}).get("0")
                    return seconds, None if waited is None else waited / 1000
            except (RuntimeError, ValueError, KeyError, StopIteration, requests.RequestException):
                pass
            time.sleep(0.2)
        return float("inf"), None

    def replica_recovered_since(self, node_name: str, since_ms: float) -> bool:
        """Whether partition 0's copy on `node_name` began its last recovery at or after `since_ms`."""
        rows = self.admin("GET", "/_cat/recovery/.locks?format=json&h=shard,target_node,start_time_millis").json()
        return any(r["shard"] == "0" and r["target_node"] == node_name and int(r["start_time_millis"]) >= since_ms
                   for r in rows)

    def started_replica_diagnostics(self) -> tuple[str | None, dict | None]:
        """(the name of the node holding partition 0's replica, its diagnostics) once that copy is
        STARTED and `.locks` green, else (None, None)."""
        replica = next((c for c in self.copies() if c["prirep"] == "r"), None)
        if replica is None or replica["state"] != "STARTED":
            return None, None
        r = self.admin("GET", f"/_cluster/health/.locks?wait_for_nodes={self.size}&timeout=0s", timeout=5)
        if r.status_code != 200 or r.json()["status"] != "green":
            return None, None
        return replica["node"], self.http.get(self.cluster.node(replica["node"]).url + "/_locks/_node/diagnostics",
                                              timeout=(CONNECT_S, 5)).json()

    def settled(self) -> bool:
        """Every node in, `.locks` green, nothing relocating (bounded by HEAL_S): the end state."""
        deadline = time.monotonic() + HEAL_S
        path = (f"/_cluster/health/.locks?wait_for_nodes={self.size}&wait_for_status=green"
                "&wait_for_no_relocating_shards=true&timeout=5s")
        while time.monotonic() < deadline:
            try:
                r = self.admin("GET", path, timeout=10)
                if r.status_code == 200 and not r.json()["timed_out"]:
                    return True
            except (RuntimeError, ValueError):
                time.sleep(1)
        return False

    def effective(self) -> dict[tuple[str, str], int]:
        """Effective faults by (kind, target aimed at)."""
        counts: dict[tuple[str, str], int] = {}
        for op in self.history.ops():
            if op.process == "nemesis" and op.type == "ok":
                counts[(op.f, op.status)] = counts.get((op.f, op.status), 0) + 1
        return counts
