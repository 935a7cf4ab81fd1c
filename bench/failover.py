"""Election failover on the three-node plugin peer (`plugin-3`, issue 15): how long after a node
dies do observers see the next leader, and does a leadership whose partition owner dies survive?

One repetition kills one node with kill -9 (`Node.kill`), then starts it again and waits for a
green cluster of three before the next. In every repetition, with a lease of `LEASE_S`:

- election "dies": its leader campaigned through the node that is killed and renewed through it
  every `RENEW_S`; it stops renewing at the kill (it ran beside its node and died with it). A
  second candidate waits (server-side, `wait`) through a surviving node, and an observer on each
  surviving node long-polls `GET /_elections/{name}/_observe?term=<leader's term>`. Failover =
  kill → the first observer answered with a new leader. The leader's lease left at the kill
  (from its last renew answer) is recorded beside it: failover ≈ lease left + overhead.
- election "lives": its leader campaigned through a surviving node and keeps renewing through
  it; a candidate waits through the third node, observers as above. It must keep its leadership
  (same term, the candidate never elected, no observer answered a new term) for a whole lease
  after the kill; a prober per surviving node reads `GET /_elections/{name}` every `PROBE_S`,
  and the longest time a prober went without a good answer around the kill is the time reads
  were unavailable.

`kind = "leader-node"` kills a node that is neither the partition's owner nor the elected
master (a three-node cluster always has one): the failover is the lease running out, nothing
else. `kind = "owner"` kills the owner of the elections' partition (partition 0: every bench
key is there while `locks.partitions` is 1): its replica is promoted on a surviving node, and
the "dies" election's failover includes that promotion.

Nothing waits without a bound: every HTTP call has a timeout, every loop a deadline."""

from __future__ import annotations

import http.client
import threading
import time

from peers import BenchError, Http
from workloads import pct

LEASE_S = 5.0  # the leaders' lease
RENEW_S = 1.0  # a leader renews every RENEW_S (a fifth of the lease)
PROBE_S = 0.02  # the readers' pause between two GETs
OBSERVE_WAIT = "2s"  # one long poll; answers at once on a change, so this only bounds stopping
SETTLE_S = 120.0  # a restarted node: bound for the cluster to be green with three nodes again
# what a call to a dead or failing-over node raises: refused, reset, timed out, cut short
DOWN = (OSError, http.client.HTTPException, ValueError)


def _post(h: Http, path: str, body: dict) -> tuple[int, dict]:
    """One call; a connection error or timeout is answered as status 0 (the node is down)."""
    try:
        return h.call("POST", path, body)
    except DOWN as e:
        return 0, {"error": str(e)}


def _get(h: Http, path: str) -> tuple[int, dict]:
    try:
        return h.call("GET", path)
    except DOWN as e:
        return 0, {"error": str(e)}


class Leader(threading.Thread):
    """A candidate elected through `port`, renewing its lease through it every RENEW_S until
    `stop` is set (`stop` set before the kill: it died with its node)."""

    def __init__(self, port: int, name: str, candidate: str):
        super().__init__(daemon=True)
        self.h = Http(port, timeout=15)
        self.name, self.candidate = name, candidate
        self.stop = threading.Event()
        self.renew_failures: list[str] = []
        st, body = _post(self.h, f"/_elections/{name}/_campaign",
                         {"candidate": candidate, "lease": f"{LEASE_S:g}s", "wait": "10s"})
        if st != 200:
            raise BenchError(f"campaign of {candidate} for {name}: {st} {body}")
        self.term = body["term"]
        self.last = (time.monotonic(), body["lease_ms"])  # (answer time, lease_ms it gave)

    def run(self):
        while not self.stop.wait(RENEW_S):
            st, body = _post(self.h, f"/_elections/{self.name}/_renew",
                             {"candidate": self.candidate, "term": self.term,
                              "lease": f"{LEASE_S:g}s"})
            if st == 200:
                self.last = (time.monotonic(), body["lease_ms"])
            else:
                self.renew_failures.append(f"{st} {str(body)[:120]}")

    def lease_left_ms(self, at: float) -> float:
        t, lease_ms = self.last
        return lease_ms - 1000.0 * (at - t)


class Candidate(threading.Thread):
    """A second candidate campaigning (waiting server-side) through `port` until it is elected
    or `stop` is set; a refused or lost campaign (503, no connection) is sent again."""

    def __init__(self, port: int, name: str, candidate: str):
        super().__init__(daemon=True)
        self.h = Http(port, timeout=40)
        self.name, self.candidate = name, candidate
        self.stop = threading.Event()
        self.elected_at: float | None = None
        self.term = None

    def run(self):
        while not self.stop.is_set():
            st, body = _post(self.h, f"/_elections/{self.name}/_campaign",
                             {"candidate": self.candidate, "lease": "60s", "wait": "30s"})
            if st == 200:
                self.elected_at, self.term = time.monotonic(), body["term"]
                return
            if st != 409:  # 409: the wait ran out, campaign again at once
                self.stop.wait(0.02)

    def resign(self):
        if self.term is not None:
            _post(self.h, f"/_elections/{self.name}/_resign", {"candidate": self.candidate})
        self.h.close()


class Observer(threading.Thread):
    """Long-polls `_observe` through `port`, from the leader's term, until an answer names a
    new leader (its monotonic time in `seen_at`) or `stop` is set."""

    def __init__(self, port: int, name: str, term: int):
        super().__init__(daemon=True)
        self.h = Http(port, timeout=15)
        self.name, self.known, self.first = name, term, term
        self.stop = threading.Event()
        self.seen_at: float | None = None
        self.errors = 0

    def run(self):
        while not self.stop.is_set():
            st, body = _get(self.h, f"/_elections/{self.name}/_observe?term={self.known}"
                                    f"&wait={OBSERVE_WAIT}")
            if st != 200:
                self.errors += 1
                self.stop.wait(0.02)
                continue
            if body.get("leader") is not None and body.get("term") != self.first:
                self.seen_at = time.monotonic()
                return
            self.known = body.get("term") or 0


class Prober(threading.Thread):
    """Reads `GET /_elections/{name}` through `port` every PROBE_S; keeps the times of the
    answers that name `leader` in `term`."""

    def __init__(self, port: int, name: str, leader: str, term: int):
        super().__init__(daemon=True)
        self.h = Http(port, timeout=15)
        self.name, self.leader, self.term = name, leader, term
        self.stop = threading.Event()
        self.good: list[float] = []

    def run(self):
        while not self.stop.is_set():
            st, body = _get(self.h, f"/_elections/{self.name}")
            if st == 200 and body.get("leader") == self.leader and body.get("term") == self.term:
                self.good.append(time.monotonic())
            self.stop.wait(PROBE_S)

    def longest_gap_ms(self, since: float, until: float) -> float:
        """The longest time without a good answer in [the last good answer before `since`,
        `until`]: what a reader of this node saw of the failover."""
        before = [t for t in self.good if t <= since]
        times = before[-1:] + [t for t in self.good if since < t <= until] + [until]
        return 1000.0 * max(b - a for a, b in zip(times, times[1:]))


def _roles(cluster) -> tuple[object, str]:
    """(the node owning partition 0, the elected master's name), asked of live nodes."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for node in cluster.nodes:
            try:
                parts = node.get("/_locks/_node/diagnostics")["core"]["partitions"]
                master = node.get("/_cat/master?format=json")[0]["node"]
            except (OSError, ValueError, KeyError, IndexError):
                continue
            if any(p.get("id") == 0 and p.get("state", "active") == "active" for p in parts):
                return node, master
        time.sleep(0.25)
    raise BenchError("no node serves lock partition 0 after 60 s")


def _victim(cluster, kind: str):
    owner, master = _roles(cluster)
    if kind == "owner":
        return owner, owner.name == master
    return next(n for n in cluster.nodes if n is not owner and n.name != master), False


def repetition(cluster, kind: str, rep: int, log=print) -> dict:
    """Kills one node (see the module's doc), measures, starts it again, waits for green."""
    victim, victim_is_master = _victim(cluster, kind)
    alive = [n for n in cluster.nodes if n is not victim]
    tag = f"bench-failover-{kind}-{rep}-{int(time.time())}"
    dies, lives = f"{tag}-dies", f"{tag}-lives"
    d_leader = Leader(victim.http_port, dies, "leader-a")
    l_leader = Leader(alive[0].http_port, lives, "leader-b")
    d_cand = Candidate(alive[0].http_port, dies, "candidate-a")
    l_cand = Candidate(alive[1].http_port, lives, "candidate-b")
    threads = [d_leader, l_leader, d_cand, l_cand]
    d_obs = [Observer(n.http_port, dies, d_leader.term) for n in alive]
    l_obs = [Observer(n.http_port, lives, l_leader.term) for n in alive]
    probers = [Prober(n.http_port, lives, "leader-b", l_leader.term) for n in alive]
    threads += d_obs + l_obs + probers
    for t in threads:
        t.start()
    _queued(alive[0], dies, "candidate-a")
    _queued(alive[0], lives, "candidate-b")
    time.sleep(RENEW_S * 1.5)  # a few renewals and reads before the kill
    d_leader.stop.set()  # the leader's process dies with its node: no renew after this
    d_leader.join(timeout=20)
    t_kill = time.monotonic()
    lease_left = d_leader.lease_left_ms(t_kill)
    log(f"    kill -9 {victim.name} ({'owner of partition 0' if kind == 'owner' else 'neither owner nor master'}"
        f"{', master' if victim_is_master else ''}); leader's lease left {lease_left:.0f} ms")
    victim.kill()
    # until the dying election's observers saw the new leader and a whole lease has passed for
    # the living one (so it was renewed through the new owner), at most lease + 30 s
    deadline = t_kill + LEASE_S + 30
    while time.monotonic() < deadline and not (
            all(o.seen_at for o in d_obs) and time.monotonic() > t_kill + LEASE_S + 1.5):
        time.sleep(0.05)
    t_end = time.monotonic()
    for t in threads:
        t.stop.set()
    reader = Http(alive[1].http_port, timeout=15)
    st, state = _get(reader, f"/_elections/{lives}")
    reader.close()
    kept = (st == 200 and state.get("leader") == "leader-b" and state.get("term") == l_leader.term
            and l_cand.elected_at is None and not any(o.seen_at for o in l_obs))
    seen = [o.seen_at for o in d_obs if o.seen_at]
    sample = {
        "kind": kind, "killed": victim.name, "killed_was_master": victim_is_master,
        "lease_left_ms": round(lease_left, 1),
        "failover_ms": round(1000.0 * (min(seen) - t_kill), 1) if seen else None,
        "failover_each_observer_ms": [round(1000.0 * (o.seen_at - t_kill), 1) if o.seen_at
                                      else None for o in d_obs],
        "candidate_elected_ms": (round(1000.0 * (d_cand.elected_at - t_kill), 1)
                                 if d_cand.elected_at else None),
        "survived": kept,
        "reads_unavailable_ms": round(max(p.longest_gap_ms(t_kill, t_end) for p in probers), 1),
        "renew_failures": l_leader.renew_failures[:5],
        "observer_errors": sum(o.errors for o in d_obs + l_obs),
    }
    # the living leader resigns, so its rival's campaign (a 30 s wait) is answered and ends
    _post(l_leader.h, f"/_elections/{lives}/_resign", {"candidate": "leader-b"})
    for t in threads:
        t.join(timeout=20)
    for c in (d_cand, l_cand):
        c.resign()
    log(f"    new leader observed after {sample['failover_ms']} ms; the other leadership "
        f"{'kept' if kept else 'LOST'}, reads unavailable {sample['reads_unavailable_ms']} ms; "
        f"starting {victim.name} again")
    _rejoin(victim, alive[0])
    return sample


def _queued(node, name: str, candidate: str) -> None:
    """Waits (bounded) until `candidate` is queued in election `name`."""
    h = Http(node.http_port, timeout=15)
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            st, body = _get(h, f"/_elections/{name}")
            if st == 200 and candidate in body.get("candidates", []):
                return
            time.sleep(0.05)
    finally:
        h.close()
    raise BenchError(f"{candidate} not queued in {name} after 20 s")


def _rejoin(node, via) -> None:
    node.start()
    node.wait_until_ready(timeout=SETTLE_S)
    h = Http(via.http_port, timeout=SETTLE_S + 10)
    try:
        st, body = h.call("GET", "/_cluster/health?wait_for_nodes=3&wait_for_status=green"
                                 f"&timeout={SETTLE_S:g}s")
    finally:
        h.close()
    if st != 200 or body.get("timed_out"):
        raise BenchError(f"cluster not green with 3 nodes after restarting {node.name}: {body}")


def run(peer, kind: str, reps: int, log=print) -> dict:
    """`reps` repetitions of `kind` on the started `plugin-3` peer; its figures."""
    samples, errors = [], []
    for rep in range(reps):
        try:
            samples.append(repetition(peer.cluster, kind, rep, log))
        except Exception as e:  # noqa: BLE001 - recorded; the next repetition needs 3 nodes
            errors.append(f"repetition {rep}: {type(e).__name__}: {e}")
            break
    fail = [s["failover_ms"] for s in samples if s["failover_ms"] is not None]
    left = [s["lease_left_ms"] for s in samples]
    over = [s["failover_ms"] - s["lease_left_ms"] for s in samples if s["failover_ms"] is not None]
    gaps = [s["reads_unavailable_ms"] for s in samples]
    errors += [f"repetition {i}: no observer saw a new leader" for i, s in enumerate(samples)
               if s["failover_ms"] is None]
    errors += [f"repetition {i}: the living leadership was lost" for i, s in enumerate(samples)
               if not s["survived"]]
    return {
        "kind": kind, "lease_s": LEASE_S, "renew_every_s": RENEW_S, "repetitions": len(samples),
        "failover_p50_ms": pct(fail, 50), "failover_max_ms": max(fail) if fail else None,
        "lease_left_p50_ms": pct(left, 50), "overhead_p50_ms": pct(over, 50),
        "survived": f"{sum(s['survived'] for s in samples)}/{len(samples)}",
        "reads_unavailable_p50_ms": pct(gaps, 50),
        "reads_unavailable_max_ms": max(gaps) if gaps else None,
        "samples": samples, "errors": errors[:5],
    }
