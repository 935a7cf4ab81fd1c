"""How long lock traffic stops when a node fails, with default settings (docs/RELIABILITY.md
"Availability"): a three-node cluster with the plugin's and Elasticsearch's defaults (replicated
lock state, default fault detection), and one fault at a time:

- `kill-owner`: kill -9 of the node that owns partition 0;
- `stop-owner`: SIGSTOP of the owner, until a new owner grants (then SIGCONT);
- `cut-owner`: the owner's transport traffic cut both ways (scripts/netcut.py), clients still
  reaching its HTTP port, until a new owner grants (then the cut is healed);
- `kill-master`: kill -9 of the elected master when it is not the owner;
- `stop-master`, `cut-master`: SIGSTOP of the elected master (it is not the owner), or its
  transport cut both ways, for HOLD_S; the owner stays, and the figure is the longest time
  without a grant during the fault (from the fault to the first grant, and between grants);
- `stop-replica`: SIGSTOP of the node holding partition 0's replica (moved off the master first
  when it is there), until a grant (then SIGCONT): the owner stays, and its batches wait until the
  copy is failed;
- `hold-replica`, `cut-replica`: that node frozen, or its transport cut both ways, for
  REPLICA_HOLD_S, past the moment Elasticsearch's follower checks remove it (3 x 10 s): the figure
  is the longest time without a grant during the fault, as for the master faults, and where in the
  fault it began.

Probers on the surviving nodes start a fresh acquire (wait 0, a new key each time: every key is in
partition 0 with the default `locks.partitions: 1`) every PROBE_S and release it once granted.
The figure is the time from the fault to the first grant answered after it whose token carries a
higher epoch than the owner had (`kill-master`, `stop-replica`: any grant; `stop-master`, `cut-master`:
the longest gap, as above). Between repetitions the node is
started again (or resumed, or reconnected) and the cluster waits for green with three nodes.

    python3 bench/availability.py [--reps 3] [--faults kill-owner,stop-owner,cut-owner,kill-master,stop-replica,stop-master,cut-master,hold-replica,cut-replica]

Needs root for iptables (`cut-owner`, `cut-master`, `cut-replica`). Prints one line per repetition and a table; with
`--json FILE` also writes them. Nothing waits without a bound."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import netcut  # noqa: E402
import node as esnode  # noqa: E402

PROBE_S = 0.1
ANSWER_S = 90  # a probe through a survivor waits for the old owner until the cluster drops it
FAULT_BOUND_S = 180  # no grant this long after the fault: the repetition fails
SETTLE_S = 180
FAULTS = ("kill-owner", "stop-owner", "cut-owner", "kill-master", "stop-replica", "stop-master", "cut-master",
          "hold-replica", "cut-replica")
MASTER_FAULTS = ("stop-master", "cut-master")
HELD_REPLICA_FAULTS = ("hold-replica", "cut-replica")
GAP_FAULTS = MASTER_FAULTS + HELD_REPLICA_FAULTS  # the figure: the longest gap while the fault holds
FROZEN = ("stop-owner", "stop-replica", "stop-master", "hold-replica")
CUT = ("cut-owner", "cut-master", "cut-replica")
HOLD_S = 20  # how long a master fault lasts
REPLICA_HOLD_S = 45  # past Elasticsearch's removal of a silent node, ~31 s with default fault detection
EPOCH_SHIFT = 40


def http(node, method, path, body=None, timeout=30):
    return requests.request(method, node.url + path, json=body, timeout=timeout)


def roles(cluster):
    """(owner node, its epoch, master node), asked of any node that answers; for up to SETTLE_S (a
    healed cut may still be electing a master)."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        found = roles_once(cluster)
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise RuntimeError("no node tells the owner and the master")
        time.sleep(1)


def roles_once(cluster):
    for n in cluster.nodes:
        try:
            master = http(n, "GET", "/_cat/master?format=json", timeout=5).json()[0]["node"]
            shards = http(n, "GET", "/_cat/shards/.locks?format=json&h=shard,prirep,node,state", timeout=5).json()
            # a relocating primary shows as "<from> -> <address> <id> <to>": the node it leaves serves
            owner = next(s["node"].split(" -> ")[0] for s in shards if s["shard"] == "0" and s["prirep"] == "p")
            diag = http(cluster.node(owner), "GET", "/_locks/_node/diagnostics", timeout=5).json()
            epoch = next(p["epoch"] for p in diag["core"]["partitions"] if p["id"] == 0)
            return cluster.node(owner), epoch, cluster.node(master)
        except (requests.RequestException, KeyError, IndexError, StopIteration, ValueError):
            continue
    return None


class Probers:
    """A fresh try-lock every PROBE_S through each of `nodes`; the first grant answered at or after
    `since` whose epoch is above `epoch` is kept."""

    def __init__(self, nodes, epoch: int, since: float):
        self.nodes, self.epoch, self.since = nodes, epoch, since
        self.first: float | None = None
        self.grants: list[float] = []  # every grant's answer time, in any epoch
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    def start(self):
        def launch():
            while not self.stop.wait(PROBE_S):
                for node in self.nodes:
                    t = threading.Thread(target=self.probe, args=(node,), daemon=True)
                    t.start()
                    self.threads.append(t)
        threading.Thread(target=launch, daemon=True).start()

    def probe(self, node):
        key = f"avail-{uuid.uuid4().hex[:8]}"
        try:
            r = http(node, "POST", f"/_locks/{key}/_acquire", {"owner": "prober", "lease": "30s"}, timeout=ANSWER_S)
        except requests.RequestException:
            return
        answered = time.monotonic()
        if r.status_code != 200:
            return
        with self.lock:
            self.grants.append(answered)
        if r.json()["fencing_token"] >> EPOCH_SHIFT > self.epoch and answered >= self.since:
            with self.lock:
                if self.first is None or answered < self.first:
                    self.first = answered
        try:
            http(node, "POST", f"/_locks/{key}/_release",
                 {"owner": "prober", "fencing_token": r.json()["fencing_token"]}, timeout=10)
        except requests.RequestException:
            pass

    def wait(self, bound: float) -> float | None:
        deadline = self.since + bound
        while time.monotonic() < deadline and self.first is None:
            time.sleep(0.05)
        self.stop.set()
        return None if self.first is None else self.first - self.since

    def longest_gap(self, window: float) -> tuple[float, float]:
        """Waits out `window` from `since`, then answers the longest time without a grant in it
        (from `since` to the first grant, between grants, and from the last one to the window's
        end) and when it began, in seconds after `since`."""
        end = self.since + window
        while time.monotonic() < end:
            time.sleep(0.05)
        self.stop.set()
        with self.lock:
            times = sorted(t for t in self.grants if self.since <= t <= end)
        edges = [self.since, *times, end]
        gap, began = max((b - a, a) for a, b in zip(edges, edges[1:]))
        return gap, began - self.since


def settle(cluster):
    """Until three nodes, `.locks` green with every copy started, and no copy on the elected
    master (the plugin moves them off it, docs/ARCHITECTURE.md "Silent owners"), seen twice 2 s
    apart: a fault must not land on a cluster state still being published (the master would
    publish the failover only after that one, which waits for the faulty node)."""
    deadline = time.monotonic() + SETTLE_S
    seen = 0
    while time.monotonic() < deadline:
        seen = seen + 1 if any(placed(n) for n in cluster.nodes) else 0
        if seen == 2:
            return
        time.sleep(2)
    raise RuntimeError("the cluster did not settle")


def placed(node) -> bool:
    try:
        r = http(node, "GET", "/_cluster/health/.locks?wait_for_nodes=3&wait_for_status=green"
                              "&wait_for_no_relocating_shards=true&wait_for_no_initializing_shards=true"
                              "&timeout=5s", timeout=10)
        if r.status_code != 200 or r.json()["timed_out"]:
            return False
        master = http(node, "GET", "/_cat/master?format=json", timeout=5).json()[0]["node"]
        shards = http(node, "GET", "/_cat/shards/.locks?format=json&h=node,state", timeout=5).json()
        return all(s["state"] == "STARTED" and s["node"] != master for s in shards)
    except (requests.RequestException, KeyError, IndexError, ValueError):
        return False


def one(cluster, fault: str) -> dict:
    """One repetition of `fault`; answers its figure."""
    settle(cluster)  # no copy moving (the plugin moves copies off a newly elected master)
    owner, epoch, master = roles(cluster)
    if fault in ("kill-master", *MASTER_FAULTS) and master is owner:
        http(owner, "POST", "/_cluster/reroute?metric=none", {"commands": [{"move": {
            "index": ".locks", "shard": 0, "from_node": owner.name,
            "to_node": next(n.name for n in cluster.nodes if n not in (owner,) and not has_copy(cluster, n))}}]})
        settle(cluster)
        owner, epoch, master = roles(cluster)
    if fault in ("stop-replica", *HELD_REPLICA_FAULTS):
        target = replica_off_the_master(cluster, owner, master)
    else:
        target = master if fault in ("kill-master", *MASTER_FAULTS) else owner
    survivors = [n for n in cluster.nodes if n is not target]
    same_owner = fault in ("kill-master", "stop-replica", *GAP_FAULTS)  # any grant counts: the epoch stays
    probers = Probers(survivors, epoch - 1 if same_owner else epoch, time.monotonic())
    probers.start()
    began = time.monotonic()
    probers.since = began
    if fault in ("kill-owner", "kill-master"):
        target.kill()
    elif fault in FROZEN:
        target.freeze()
    else:
        netcut.cut(target)
    gap_began = None
    try:
        if fault in GAP_FAULTS:
            seconds, gap_began = probers.longest_gap(REPLICA_HOLD_S if fault in HELD_REPLICA_FAULTS else HOLD_S)
        else:
            seconds = probers.wait(FAULT_BOUND_S)
    finally:
        if fault in FROZEN:
            target.thaw()
        elif fault in CUT:
            netcut.heal(target)
        else:
            target.start()
            target.wait_until_ready(timeout=SETTLE_S)
    settle(cluster)
    return {"fault": fault, "target": target.name, "seconds": seconds, "gap_began_s": gap_began}


def replica_off_the_master(cluster, owner, master):
    """The node holding partition 0's replica, moved first to the node with no copy when it is the
    master (a frozen master is an election, `stop-owner`'s story)."""
    settle(cluster)  # a replica still initializing cannot be moved
    shards = http(owner, "GET", "/_cat/shards/.locks?format=json&h=shard,prirep,node").json()
    replica = next(cluster.node(s["node"]) for s in shards if s["shard"] == "0" and s["prirep"] == "r")
    if replica is master:
        third = next(n for n in cluster.nodes if n not in (owner, master))
        r = http(owner, "POST", "/_cluster/reroute?metric=none", {"commands": [{"move": {
            "index": ".locks", "shard": 0, "from_node": master.name, "to_node": third.name}}]})
        if r.status_code != 200:
            raise RuntimeError(f"moving the replica off the master: {r.status_code} {r.text[:500]}")
        settle(cluster)
        replica = third
    return replica


def has_copy(cluster, node) -> bool:
    shards = http(cluster.nodes[0], "GET", "/_cat/shards/.locks?format=json&h=shard,node").json()
    return any(s["shard"] == "0" and s["node"] == node.name for s in shards)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    faults = args.faults.split(",")
    if set(CUT) & set(faults) and netcut.usable() is not None:
        raise SystemExit(f"{', '.join(CUT)} need iptables: {netcut.usable()}")
    # Unix users of its own (scripts/netcut.py cuts by user): the default ones are shared by every
    # cluster without cuts, which a cut here would cut too.
    cluster = esnode.Cluster("eslm-bench-availability", 3, users="eslmavail",
                             extra_settings={"cluster.routing.rebalance.enable": "none"})
    netcut.heal_all(cluster.nodes)  # what a run killed half-way left
    cluster.start()
    for n in cluster.nodes:
        netcut.mark(n)  # before any cut (scripts/netcut.py)
    results = []
    try:
        for fault in faults:
            for rep in range(args.reps):
                r = one(cluster, fault)
                results.append(r)
                shown = "no grant" if r["seconds"] is None else f"{r['seconds']:.2f} s"
                if r["gap_began_s"] is not None:
                    shown = f"longest gap {shown}, from {r['gap_began_s']:.2f} s into the fault"
                else:
                    shown = f"next grant after {shown}"
                print(f"{fault} #{rep + 1} ({r['target']}): {shown}", flush=True)
    finally:
        netcut.heal_all(cluster.nodes)
        for n in cluster.nodes:
            n.thaw()
        cluster.stop()
    print("\n| fault | repetitions | time to the next grant (master and held-replica faults: longest gap): median | max |"
          "\n|---|---|---|---|")
    for fault in faults:
        xs = [r["seconds"] for r in results if r["fault"] == fault]
        known = [x for x in xs if x is not None]
        med = f"{statistics.median(known):.2f} s" if known else "-"
        worst = "no grant" if None in xs else f"{max(xs):.2f} s"
        print(f"| {fault} | {len(xs)} | {med} | {worst} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
