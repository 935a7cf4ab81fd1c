"""The fault test's run (tests/integration/test_nemesis.py on three nodes, test_nemesis_moves.py
on four, docs/RELIABILITY.md "The run"): the load of workers, holders and readers
(tests/integration/workers.py) and the nemesis (tests/integration/nemesis.py) on one history,
then the checker's rules (tests/integration/history.py), the liveness phase after the last heal,
and the bounds on recovery and on time without a grant. Beside them, a prober per node takes
fresh keys on a history of its own, read only for the time from each fault to the next grant."""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time

import requests

import netcut
import node as esnode
from history import ACQUIRE, History, after_faults, check, longest_gap_of_any, longest_gaps
from nemesis import HEAL_S, HEALED_WITHIN_S, NO_RECOVERY, Nemesis
from protected_data import DataLoad, Spec, check as check_data, final_documents
from workers import Holder, Load, Prober, Reader, Worker

WORKERS = 4  # short holds
HOLDERS = 3  # long holds, renewed
READERS = 2  # GET of the keys
KEYS = [f"nemesis-{i}" for i in range(3)]
LEASE_S = 5  # a short hold's lease: longer than a hold and a wait
HOLD_LEASE_S = 10  # a long hold's lease, renewed every RENEW_EVERY_S
HOLD_S = (5, 20)
RENEW_EVERY_S = 1
WAIT_S = 3
CONNECT_S = 2
ANSWER_S = WAIT_S + 7  # an acquire's answer may take its wait plus a slow hop or two
ADMIN_S = 15
# Longest a key may go without a grant: Elasticsearch's default fault detection (a frozen or cut
# off node is dropped after about 30 s), promotion, and the lease of a long hold whose holder's
# renewals went through the faulty node (HOLD_LEASE_S); and for a cut, what TCP adds after the
# heal: a request sent during the cut waits for its connection's retransmission backoff, up to
# about the cut's length (CUT_S, at most 40 s) — seen: the owner's batch waited 23 s past the
# heal of a 31.5 s cut of the master for Elasticsearch's shard-failed request to the old master,
# and the first seed-26 run of 600 s went 62.8 s without a grant (docs/RELIABILITY.md "Figures").
GAP_BOUND_S = 90
# After the last heal, with the cluster settled, every key is granted within this: the owner bound
# (5 s, docs/RELIABILITY.md "Availability") plus the longest lease a hold in progress may still
# have (a long hold's, renewed, whose holder stopped: HOLD_LEASE_S).
LIVENESS_S = 5 + HOLD_LEASE_S

# The nodes' settings: the plugin's defaults and Elasticsearch's default fault detection, except a
# lease maximum of 30s (and a default lease under it) so a lost lease shows within the run.
SETTINGS = {
    "locks.lease.max": "30s",
    "locks.lease.default": f"{LEASE_S}s",
    # what a failed run needs to be read: the plugin's replication and ownership, and recoveries
    "logger.org.eslm.cluster": "DEBUG",
    "logger.org.eslm.replication": "DEBUG",
    "logger.org.elasticsearch.indices.recovery": "DEBUG",
}


def save(history: History, name: str, file: str = "history.jsonl") -> None:
    """The history as JSON lines in the cluster's folder, for a post-mortem of the last run."""
    with (esnode.cluster_home(name) / file).open("w") as f:
        for op in history.ops():
            f.write(json.dumps(dataclasses.asdict(op)) + "\n")


def spread(values: list[float]) -> str:
    """min / median / 90th and 99th percentile (nearest rank) / max of `values`, in seconds."""
    if not values:
        return "none"
    v = sorted(values)

    def rank(p: float) -> float:
        return v[min(len(v) - 1, max(0, math.ceil(p * len(v)) - 1))]
    return (f"min {v[0]:.2f}, median {v[len(v) // 2]:.2f}, p90 {rank(0.9):.2f}, p99 {rank(0.99):.2f}, "
            f"max {v[-1]:.2f} s ({len(v)})")


# What a fault may cost the locks (issue 47 item 5; docs/RELIABILITY.md "Availability"): a frozen,
# cut, killed or restarted owner, a move and its faults, the owner bound; the master alone, and
# an election, 1 s; any other node (a replica's, or none) 1.5 s. Two faults are slower by design:
# `pause_both` (a frozen master fails nothing over) and `fast_failover` (the new owner serves once
# the cut node's publication has ended, at the heal) cost their length plus the owner bound.
OWNER_BOUND_S, MASTER_BOUND_S, REPLICA_BOUND_S = 5.0, 1.0, 1.5


def roles(detail: str) -> set[str]:
    """The roles a fault's detail names for its node: `node-2 (owner, master)` -> both; `(neither
    owner nor master)` -> none."""
    named = detail.split("(", 1)[1].split(")", 1)[0] if "(" in detail else ""
    return set(named.split(", ")) & {"owner", "master"}


def fault_bound(a) -> float:
    """The bound of one fault (`history.AfterFault`), from its kind and the roles it hit."""
    if a.kind in ("pause_both", "fast_failover"):
        return a.lasted_s + OWNER_BOUND_S
    hit = roles(a.detail)
    if a.kind.startswith("move") or "owner" in hit:
        return OWNER_BOUND_S
    if a.kind == "elect" or "master" in hit:
        return MASTER_BOUND_S
    return REPLICA_BOUND_S


def over_bound(a) -> bool:
    """Whether the next grant came later than the fault's bound after a request waited on a free
    key, that bound running out before the next fault began (after that, the next fault may be
    what holds the grant back)."""
    if a.to_grant_s is None or a.asked_s is None:
        return False
    due = a.asked_s + fault_bound(a)
    return a.to_grant_s > due and (a.until_next_s is None or due <= a.until_next_s)


def shown_s(s: float | None, absent: str = "none") -> str:
    """A time in seconds as the report prints it, or `absent` when there is none."""
    return absent if s is None else f"{s:.2f}s"


def print_after_faults(after: list, probed: list, origin: float) -> None:
    """Per fault: the time from its start to the next grant of the shared keys asked for after it,
    against the fault's bound counted from when a request asked for after it waited on a key free
    of certain holds; the time to the next grant of a prober's fresh key (`probed`, the same faults
    in the same order: how long the fault kept a new request from any grant); and from its heal
    until `.locks` was green again (a returning node's copy in sync). Then their spread, and the
    faults over their bound (reported: the known causes are in docs/RELIABILITY.md "Figures")."""
    for a, p in zip(after, probed, strict=True):
        print(f"  after {a.kind} {a.target} at {a.at - origin:6.1f}s ({a.lasted_s:.1f}s): next grant "
              f"{shown_s(a.to_grant_s)} (bound {fault_bound(a):.1f}s after a request waited on a free key, "
              f"{'never' if a.asked_s is None else f'{a.asked_s:.2f}s in'}"
              f"{': OVER' if over_bound(a) else ''}), of a fresh key {shown_s(p.to_grant_s)}"
              f"{': OVER' if over_bound(p) else ''}, green {shown_s(a.to_green_s, 'never')} after the heal",
              flush=True)
    over = [a for a in after if over_bound(a)]
    print(f"  faults whose next grant came past their bound: {len(over)} of {len(after)}; of a fresh key: "
          f"{sum(over_bound(p) for p in probed)} of {len(probed)}", flush=True)
    print(f"  time to the next grant: {spread([a.to_grant_s for a in after if a.to_grant_s is not None])}",
          flush=True)
    print(f"  time to the next grant of a fresh key: "
          f"{spread([p.to_grant_s for p in probed if p.to_grant_s is not None])}", flush=True)
    print(f"  time from the heal to green: {spread([a.to_green_s for a in after if a.to_green_s is not None])}",
          flush=True)


def granted_after_the_faults(cluster) -> dict[str, float]:
    """The liveness phase: every key asked for through a node in turn, once the faults are over and
    the cluster settled: seconds until each was granted (released at once after), or the failure."""
    took = {}
    for i, key in enumerate(KEYS):
        node = cluster.nodes[i % len(cluster.nodes)]
        body = {"owner": "liveness", "acquisition": "liveness", "wait": f"{LIVENESS_S}s", "lease": "5s"}
        started = time.monotonic()
        r = requests.post(f"{node.url}/_locks/{key}/_acquire", json=body, timeout=LIVENESS_S + 15)
        took[key] = time.monotonic() - started
        assert r.status_code == 200, f"{key} not granted within {LIVENESS_S}s after the faults: {r.text}"
        requests.post(f"{node.url}/_locks/{key}/_release", json={"owner": "liveness", "acquisition": "liveness"},
                      timeout=15)
    return took


def missing_faults(effective: dict, required: list) -> list:
    """The `required` faults missing from `effective` (`Nemesis.effective()`)."""
    return [need for need in required if effective.get(need, 0) == 0]


# The protected-data load beside the lock load (issue 48 item 2, tests/integration/protected_data.py):
# documents changed under their locks through the Python client's fenced changes, holders stopped
# past their leases, while the nemesis hurts the nodes; the index has a replica.
DATA_SPECS = [Spec("counter", ("c1",), 2), Spec("list", ("l1",), 1), Spec("flag", ("f1",), 1)]
DATA_INDEX = "protected"


def run(cluster, name: str, seconds: float, seed: int, required: list, optional: list, flaw: str | None,
        data: list[Spec] | None = None) -> None:
    """The fault test on `cluster` (folder `name` under build/): the load and the nemesis (making
    `required` faults first in each round, then `optional`) for `seconds` at least and until every
    required fault was made (at most as long again), then the checker, the liveness phase and the
    bounds; fails on the first that does not hold. `data`: the protected-data load beside it, and
    its checker."""
    print(f"\nnemesis seed {seed} (ESLM_NEMESIS_SEED={seed} reproduces the schedule), {seconds:.0f}s of faults"
          + (f", on the fault-injection build with the flaw {flaw}" if flaw else ""), flush=True)
    history, stop = History(), threading.Event()
    nemesis = Nemesis(cluster, history, stop, seed, required=required, optional=optional)
    load = Load(seed=seed, keys=tuple(KEYS), lease_s=LEASE_S, hold_lease_s=HOLD_LEASE_S, hold_s=HOLD_S,
                renew_every_s=RENEW_EVERY_S, wait_s=WAIT_S, connect_s=CONNECT_S, admin_s=ADMIN_S)
    workers = [Worker(i, cluster, history, stop, load) for i in range(WORKERS)]
    workers += [Holder(i, cluster, history, stop, load) for i in range(HOLDERS)]
    workers += [Reader(i, cluster, history, stop, load) for i in range(READERS)]
    probes = History()
    workers += [Prober(i, cluster, probes, stop, load) for i in range(len(cluster.nodes))]
    data_load = DataLoad([n.url for n in cluster.nodes], DATA_INDEX, data, seed, seconds) if data else None
    for t in [w.thread for w in workers] + [nemesis.thread]:
        t.start()
    if data_load is not None:
        data_load.start()
    stop.wait(seconds)
    overtime = time.monotonic() + seconds
    while missing_faults(nemesis.effective(), required) and time.monotonic() < overtime:
        time.sleep(2)  # the nemesis makes a fault every few seconds
    stop.set()
    history.end()  # availability is measured while the workers were asking
    for w in workers:
        w.thread.join(ANSWER_S + HOLD_S[1] + 3 * (ADMIN_S + CONNECT_S) + 10)
    nemesis.thread.join(HEAL_S * 2 + 60)  # a fault in progress finishes and heals
    stuck = [t.name for t in [nemesis.thread, *(w.thread for w in workers)] if t.is_alive()]
    netcut.heal_all(cluster.nodes)
    for n in cluster.nodes:
        n.thaw()
    if data_load is not None:
        data_load.join()
    save(history, name)
    save(probes, name, "probes.jsonl")
    report = check(history, keys=KEYS)
    print(f"seed {seed}\n" + report.summary(origin=history.started), flush=True)
    for op in history.ops():
        if op.process == "nemesis":
            print(f"  fault at {op.invoke - history.started:6.1f}s for {(op.complete or op.invoke) - op.invoke:5.1f}s: "
                  f"{op.f} {op.type} {op.detail or ''} {op.status or ''}", flush=True)
    for e in nemesis.errors:
        print(f"  nemesis error: {e}", flush=True)
    effective = nemesis.effective()
    print(f"  effective faults by (kind, target): {dict(sorted(effective.items()))}", flush=True)
    faults_only = [op for op in history.ops() if op.process == "nemesis"]
    print_after_faults(after_faults(history.ops(), nemesis.green_at),
                       after_faults(faults_only + probes.ops(), nemesis.green_at), history.started)
    fresh = longest_gap_of_any(probes.ops(), history.started, history.ended, "a fresh key")
    print(f"  longest time without a grant of any fresh key (the probers): {fresh.seconds:.2f}s "
          f"(from {fresh.start - history.started:.1f}s)", flush=True)
    unavailable = sum(n for name, n in report.counts.items() if name.startswith(ACQUIRE + " fail 503"))
    asked = report.counts["grants"] + sum(n for name, n in report.counts.items() if name.startswith(ACQUIRE + " "))
    print(f"  acquires answered 503: {unavailable} of {asked} ({100 * unavailable / max(asked, 1):.0f} %)", flush=True)
    assert report.violations == [], f"seed {seed}: " + report.summary(origin=history.started)
    if data_load is not None:
        check_protected_data(cluster, data_load, seed)
    assert not stuck, f"seed {seed}: threads still running after the deadline: {stuck}"
    assert nemesis.settled(), f"seed {seed}: the cluster did not heal within {HEAL_S}s"
    took = granted_after_the_faults(cluster)
    print("  after the last heal, granted in: " + ", ".join(f"{k} {t:.2f}s" for k, t in took.items()), flush=True)
    missing = missing_faults(effective, required)
    assert not missing, f"seed {seed}: the run made none of {missing} in twice ESLM_NEMESIS_SECONDS"
    assert report.counts["grants"] > 0 and report.counts["renews"] > 0, "the run proved nothing"
    print(f"  after each healed partition (s from the heal until green with a standby, s the replica's "
          f"recovery waited for the whole state, {NO_RECOVERY}: no recovery since the cut): {nemesis.heals}",
          flush=True)
    never = [h for h in nemesis.heals if h[0] == float("inf") or h[1] is None]
    assert not never, f"seed {seed}: after a healed partition .locks was not green with a replica holding the " \
                      f"standby within {HEAL_S}s, or the replica's node reported no recovery: {nemesis.heals}"
    slow = [h for h in nemesis.heals if h[1] > HEALED_WITHIN_S]
    assert not slow, f"seed {seed}: after a healed partition a replica's recovery waited more than " \
                     f"{HEALED_WITHIN_S}s for its owner's whole state: {slow}"
    # Back-to-back faults add up; what the bound is about is the time the cluster had to recover.
    faults = [(op.invoke, op.complete) for op in history.ops() if op.process == "nemesis" and op.type == "ok"]
    outside = longest_gaps(history.ops(), history.started, history.ended, KEYS, faults)
    print("  longest time without a grant outside faults: " + ", ".join(
        f"{k} {g.seconds:.1f}s (of {g.end - g.start:.1f}s from {g.start - history.started:.1f}s)"
        for k, g in sorted(outside.items())), flush=True)
    longest = max(outside.values(), key=lambda g: g.seconds)
    assert longest.seconds <= GAP_BOUND_S, \
        f"seed {seed}: {longest.key} went {longest.seconds:.1f}s without a grant outside faults"


def check_protected_data(cluster, load: DataLoad, seed: int) -> None:
    """The protected-data checker over the final documents, read once the cluster is green."""
    assert not load.errors, load.errors
    node = next(n for n in cluster.nodes if n.process is not None and n.process.poll() is None)
    r = requests.get(f"{node.url}/_cluster/health/{DATA_INDEX}?wait_for_status=green&timeout=120s", timeout=130)
    assert r.status_code == 200 and not r.json()["timed_out"], r.text
    docs = sorted({d for s in load.specs for d in s.docs})
    report = check_data(load.records, final_documents(node.url, DATA_INDEX, docs))
    print(f"  protected data: {load.pauses} holder pauses\n  " + report.summary().replace("\n", "\n  "), flush=True)
    assert report.violations == [], f"seed {seed}: " + report.summary()
    acknowledged = sum(n for k, n in report.counts.items() if k.endswith(" ok"))
    assert acknowledged > 0, f"seed {seed}: no change to protected data was acknowledged: {report.counts}"
