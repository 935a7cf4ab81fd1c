"""Election failover on the three-server peers (issue 15): how long after a node dies do
observers see the next leader, and does a leadership whose partition owner dies survive? Told
here for the plugin on three nodes (`plugin-3`, `PluginSide`); the ensembles run the same
repetition through their own election recipes as the comparison: etcd's election API
(`etcd-3`, `EtcdSide`, the Raft leader as the owner) and kazoo's `Election` recipe
(`zookeeper-3`, `ZkSide`, the ensemble's leader as the owner).

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
master (a three-node cluster always has one; an ensemble: a follower): the failover is the lease running out, nothing
else. `kind = "owner"` kills the owner of the elections' partition (partition 0: every bench
key is there while `locks.partitions` is 1): its replica is promoted on a surviving node, and
the "dies" election's failover includes that promotion.

Nothing waits without a bound: every HTTP call has a timeout, every loop a deadline."""

from __future__ import annotations

import base64
import http.client
import json
import threading
import time
from dataclasses import dataclass

from peers import BenchError, Http, _b64
from workloads import pct

LEASE_S = 5.0  # the leaders' lease
RENEW_S = 1.0  # a leader renews every RENEW_S (a fifth of the lease)
PROBE_S = 0.02  # the readers' pause between two GETs
OBSERVE_S = 2.0  # one long poll; answers at once on a change, so this only bounds stopping
OBSERVE_WAIT = f"{OBSERVE_S:g}s"
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


def _first_of(nodes, role, what: str, timeout: float = 60):
    """The first answer of `role(node)` that is not None, asking the nodes in turn until
    `timeout` (a cluster settling after a restart may have no owner or leader for a while)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for node in nodes:
            found = role(node)
            if found is not None:
                return found
        time.sleep(0.25)
    raise BenchError(f"{what} after {timeout:g} s")


class PluginElections:
    """One connection to one node of `plugin-3`, speaking docs/API.md's "Elections". A
    leadership's identity is its term."""

    def __init__(self, port: int, timeout: float = 15):
        self.h = Http(port, timeout=timeout)

    def campaign(self, name: str, candidate: str, lease_s: float, wait_s: float):
        """(status, term, lease_ms): 200 once elected."""
        st, body = _post(self.h, f"/_elections/{name}/_campaign",
                         {"candidate": candidate, "acquisition": candidate, "lease": f"{lease_s:g}s",
                          "wait": f"{wait_s:g}s"})
        return st, body.get("term"), body.get("lease_ms")

    def renew(self, name: str, candidate: str, term) -> float | None:
        st, body = _post(self.h, f"/_elections/{name}/_renew",
                         {"candidate": candidate, "term": term, "lease": f"{LEASE_S:g}s"})
        return body["lease_ms"] if st == 200 else None

    def resign(self, name: str, candidate: str) -> None:
        # each candidate campaigns once at a time, so its name is its campaign's acquisition id
        _post(self.h, f"/_elections/{name}/_resign", {"candidate": candidate, "acquisition": candidate})

    def leader(self, name: str):
        """(answered, the leadership's term or None, queued candidates)."""
        st, body = _get(self.h, f"/_elections/{name}")
        term = body.get("term") if body.get("leader") else None
        return st == 200, term, body.get("candidates", [])

    def observe(self, name: str, known):
        """(answered, the term then or None): at once when the term is not `known`, else when
        it changes or after OBSERVE_WAIT."""
        st, body = _get(self.h,
                        f"/_elections/{name}/_observe?term={known or 0}&wait={OBSERVE_WAIT}")
        return st == 200, body.get("term") if body.get("leader") else None

    def close(self):
        self.h.close()


class PluginSide:
    """`plugin-3`'s nodes: kill -9, start again, and which node owns partition 0."""

    owner_label = "owner of partition 0"
    master_label = ", master"

    def __init__(self, peer):
        self.cluster = peer.cluster
        self.nodes = list(peer.cluster.nodes)

    def client(self, node, timeout: float = 15, only: bool = False) -> PluginElections:
        return PluginElections(node.http_port, timeout)

    def roles(self) -> tuple[object, str]:
        """(the node owning partition 0, the elected master's name), asked of live nodes."""
        return _first_of(self.nodes, self._role, "no node serves lock partition 0")

    @staticmethod
    def _role(node):
        try:
            parts = node.get("/_locks/_node/diagnostics")["core"]["partitions"]
            master = node.get("/_cat/master?format=json")[0]["node"]
        except (OSError, ValueError, KeyError, IndexError):
            return None
        if any(p.get("id") == 0 and p.get("state", "active") == "active" for p in parts):
            return node, master
        return None

    def kill(self, node) -> None:
        node.kill()

    def rejoin(self, node, via) -> None:
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


class Leader(threading.Thread):
    """A candidate elected through `client`, renewing its lease through it every RENEW_S until
    `stop` is set (`stop` set before the kill: it died with its node)."""

    def __init__(self, client, name: str, candidate: str):
        super().__init__(daemon=True)
        self.c, self.name, self.candidate = client, name, candidate
        self.stop = threading.Event()
        self.renew_failures = 0
        sent = time.monotonic()
        st, self.term, lease_ms = client.campaign(name, candidate, LEASE_S, 10)
        if st != 200:
            raise BenchError(f"campaign of {candidate} for {name}: {st}")
        # (request sent, answer received, the lease it gave in ms): the server started that
        # lease in between
        self.last = (sent, time.monotonic(), lease_ms)

    def run(self):
        while not self.stop.wait(RENEW_S):
            sent = time.monotonic()
            lease_ms = self.c.renew(self.name, self.candidate, self.term)
            if lease_ms is None:
                self.renew_failures += 1
            else:
                self.last = (sent, time.monotonic(), lease_ms)

    def lease_left_ms(self, at: float, since_sent: bool = False) -> float:
        """The lease left at `at` as the client sees it: counted from the last renew's answer,
        or (`since_sent`) from its request, the earliest the server may have started it."""
        sent, answered, lease_ms = self.last
        return lease_ms - 1000.0 * (at - (sent if since_sent else answered))


class Candidate(threading.Thread):
    """A second candidate campaigning (waiting server-side) through `client` until it is
    elected or `stop` is set; a refused or lost campaign (503, no connection) is sent again."""

    def __init__(self, client, name: str, candidate: str):
        super().__init__(daemon=True)
        self.c, self.name, self.candidate = client, name, candidate
        self.stop = threading.Event()
        self.elected_at: float | None = None

    def run(self):
        while not self.stop.is_set():
            st, term, _ = self.c.campaign(self.name, self.candidate, 60, 30)
            if st == 200:
                self.elected_at = time.monotonic()
                return
            if st != 409:  # 409: the wait ran out, campaign again at once
                self.stop.wait(0.02)

    def resign(self):
        if self.elected_at is not None:
            self.c.resign(self.name, self.candidate)
        self.c.close()


class Observer(threading.Thread):
    """Observes the election through `client`, from the leader's identity, until an answer
    names a new leader (its monotonic time in `seen_at`) or `stop` is set."""

    def __init__(self, client, name: str, first):
        super().__init__(daemon=True)
        self.c, self.name, self.known, self.first = client, name, first, first
        self.stop = threading.Event()
        self.seen_at: float | None = None
        self.errors = 0

    def run(self):
        while not self.stop.is_set():
            answered, now = self.c.observe(self.name, self.known)
            if not answered:
                self.errors += 1
                self.stop.wait(0.02)
                continue
            if now is not None and now != self.first:
                self.seen_at = time.monotonic()
                return
            self.known = now


class Prober(threading.Thread):
    """Reads the election's leader through `client` every PROBE_S; keeps the times of the
    answers that name the leadership `first`."""

    def __init__(self, client, name: str, first):
        super().__init__(daemon=True)
        self.c, self.name, self.first = client, name, first
        self.stop = threading.Event()
        self.good: list[float] = []

    def run(self):
        while not self.stop.is_set():
            answered, now, _ = self.c.leader(self.name)
            if answered and now == self.first:
                self.good.append(time.monotonic())
            self.stop.wait(PROBE_S)

    def longest_gap_ms(self, since: float, until: float) -> float:
        """The longest time without a good answer in [the last good answer before `since`,
        `until`]: what a reader of this node saw of the failover."""
        before = [t for t in self.good if t <= since]
        times = before[-1:] + [t for t in self.good if since < t <= until] + [until]
        return 1000.0 * max(b - a for a, b in zip(times, times[1:]))


class EtcdElections:
    """One connection to one member of `etcd-3`, through its JSON gateway: etcd's election API
    (`/v3/election/campaign` under a lease of this client's, kept alive by `/v3/lease/keepalive`;
    `/v3/election/observe`, a stream). A leadership's identity is its key."""

    def __init__(self, port: int, timeout: float = 15):
        self.port = port
        self.h = Http(port, timeout=timeout)
        self.lease = None

    def campaign(self, name: str, candidate: str, lease_s: float, wait_s: float):
        """(status, key, lease_ms); the gateway waits as long as the connection does."""
        if self.lease is None:
            st, body = _post(self.h, "/v3/lease/grant", {"TTL": int(lease_s)})
            if st != 200:
                return st, None, None
            self.lease = body["ID"]
        st, body = _post(self.h, "/v3/election/campaign",
                         {"name": _b64(name), "lease": self.lease, "value": _b64(candidate)})
        if st != 200 or "leader" not in body:
            return st or 503, None, None
        return 200, body["leader"]["key"], 1000.0 * int(lease_s)

    def renew(self, name: str, candidate: str, key) -> float | None:
        st, body = _post(self.h, "/v3/lease/keepalive", {"ID": self.lease})
        ttl = int(body.get("result", {}).get("TTL", 0)) if st == 200 else 0
        return 1000.0 * ttl if ttl > 0 else None

    def resign(self, name: str, candidate: str) -> None:
        if self.lease is not None:
            _post(self.h, "/v3/lease/revoke", {"ID": self.lease})

    def leader(self, name: str):
        """(answered, the leader's key or None, queued candidates): the election's keys by
        creation, the first one leads (what `/v3/election/leader` answers)."""
        st, body = _post(self.h, "/v3/kv/range", {
            "key": _b64(name + "/"), "range_end": _b64(name + "0"), "sort_order": "ASCEND",
            "sort_target": "CREATE"})
        kvs = body.get("kvs", []) if st == 200 else []
        queued = [base64.b64decode(kv["value"]).decode() for kv in kvs[1:]]
        return st == 200, kvs[0]["key"] if kvs else None, queued

    def observe(self, name: str, known):
        """(answered, the leader's key): the observe stream's first leader that is not
        `known`, or `known` after OBSERVE_S without one."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=OBSERVE_S)
        try:
            conn.request("POST", "/v3/election/observe", body=json.dumps({"name": _b64(name)}),
                         headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            while r.status == 200:
                line = r.readline()
                if not line:
                    break  # the stream ended: the member went away
                kv = json.loads(line).get("result", {}).get("kv") or {}
                if kv.get("key") != known:
                    return True, kv.get("key")
            return False, None
        except TimeoutError:
            return True, known
        except DOWN:
            return False, None
        finally:
            conn.close()

    def close(self):
        self.h.close()


@dataclass
class Member:
    k: int
    name: str
    port: int


class EtcdSide:
    """`etcd-3`'s members: kill -9, start again, and which one is the Raft leader (the
    partition owner's counterpart: every write goes through it)."""

    owner_label = "Raft leader"
    master_label = ""  # the Raft leader is both

    def __init__(self, peer):
        self.peer = peer
        self.nodes = [Member(k, f"m{k + 1}", port) for k, port in enumerate(peer.ports)]

    def client(self, member, timeout: float = 15, only: bool = False) -> EtcdElections:
        return EtcdElections(member.port, timeout)

    def roles(self) -> tuple[Member, str]:
        return _first_of(self.nodes, self._role, "no etcd member leads")

    @staticmethod
    def _role(m: Member):
        h = Http(m.port, timeout=5)
        st, body = _post(h, "/v3/maintenance/status", {})
        h.close()
        if st == 200 and body.get("leader") == body.get("header", {}).get("member_id"):
            return m, m.name
        return None

    def kill(self, member) -> None:
        self.peer.kill_member(member.k)

    def rejoin(self, member, via) -> None:
        self.peer.restart_member(member.k)


class ZkElections:
    """One kazoo session on the ensemble, session timeout LEASE_S, kazoo's `Election` recipe
    (`zk.Election(path, id)`: a kazoo `Lock`, the first contender leads). The session is the
    lease: ZooKeeper expires it LEASE_S after the last request or ping it had from the client
    (in buckets of its 2 s tick); `renew` is one request (`exists`), and kazoo pings by itself
    too. A leadership's identity is the leader's identifier. `hosts` of one server only: the
    client cannot move to another server, its session dies with that server."""

    def __init__(self, hosts: str):
        import logging

        from kazoo.client import KazooClient

        logging.getLogger("kazoo").setLevel(logging.CRITICAL)
        self.zk = KazooClient(hosts=hosts, timeout=LEASE_S, randomize_hosts=False)
        self.zk.start(timeout=30)
        self.mine = {}

    @staticmethod
    def path(name: str) -> str:
        return f"/bench-elections/{name}"

    def campaign(self, name: str, candidate: str, lease_s: float, wait_s: float):
        from kazoo.exceptions import LockTimeout

        election = self.mine[name] = self.zk.Election(self.path(name), candidate)
        try:
            election.lock.acquire(timeout=wait_s)
        except LockTimeout:
            return 409, None, None
        except Exception:  # noqa: BLE001 - connection loss and the like: campaign again
            return 503, None, None
        return 200, candidate, 1000.0 * LEASE_S

    def renew(self, name: str, candidate: str, key) -> float | None:
        try:
            self.zk.exists(self.path(name))
            return 1000.0 * LEASE_S
        except Exception:  # noqa: BLE001
            return None

    def resign(self, name: str, candidate: str) -> None:
        try:
            self.mine[name].lock.release()
        except Exception:  # noqa: BLE001 - best effort at the end of a repetition
            pass

    def leader(self, name: str):
        try:
            who = self.zk.Election(self.path(name)).contenders()
        except Exception:  # noqa: BLE001
            return False, None, []
        return True, (who[0] if who else None), who[1:]

    def observe(self, name: str, known):
        """(answered, the leader): at once when it is not `known`, else when the election's
        children change (a watch) to another leader, or `known` after OBSERVE_S."""
        deadline = time.monotonic() + OBSERVE_S
        while True:
            changed = threading.Event()
            try:
                self.zk.get_children(self.path(name), watch=lambda event: changed.set())
                who = self.zk.Election(self.path(name)).contenders()
            except Exception:  # noqa: BLE001
                return False, None
            now = who[0] if who else None
            if now != known:
                return True, now
            if not changed.wait(max(0.0, deadline - time.monotonic())):
                return True, known

    def close(self):
        try:
            self.zk.stop()
            self.zk.close()
        except Exception:  # noqa: BLE001
            pass


class ZkSide:
    """`zookeeper-3`'s servers: kill -9, start again, and which one is the ensemble's leader
    (every write goes through it)."""

    owner_label = "ensemble leader"
    master_label = ""

    def __init__(self, peer):
        self.server = peer.server
        self.nodes = [Member(k, f"s{k + 1}", port) for k, port in enumerate(self.server.ports)]

    def client(self, member, timeout: float = 15, only: bool = False) -> ZkElections:
        return ZkElections(f"127.0.0.1:{member.port}" if only else self.server.hosts(member.k))

    def roles(self) -> tuple[Member, str]:
        for m in self.nodes:
            if self.server._srvr(m.port) == "leader":
                return m, m.name
        raise BenchError("no ZooKeeper server is the leader")

    def kill(self, member) -> None:
        self.server.kill_member(member.k)

    def rejoin(self, member, via) -> None:
        self.server.restart_member(member.k)


def _victim(side, kind: str):
    owner, master = side.roles()
    if kind == "owner":
        return owner, owner.name == master
    return next(n for n in side.nodes if n is not owner and n.name != master), False


def repetition(side, kind: str, rep: int, log=print) -> dict:
    """Kills one node (see the module's doc), measures, starts it again, waits for green."""
    victim, victim_is_master = _victim(side, kind)
    alive = [n for n in side.nodes if n is not victim]
    tag = f"bench-failover-{kind}-{rep}-{int(time.time())}"
    dies, lives = f"{tag}-dies", f"{tag}-lives"
    d_leader = Leader(side.client(victim, only=True), dies, "leader-a")
    l_leader = Leader(side.client(alive[0]), lives, "leader-b")
    d_cand = Candidate(side.client(alive[0], 40), dies, "candidate-a")
    l_cand = Candidate(side.client(alive[1], 40), lives, "candidate-b")
    threads = [d_leader, l_leader, d_cand, l_cand]
    d_obs = [Observer(side.client(n), dies, d_leader.term) for n in alive]
    l_obs = [Observer(side.client(n), lives, l_leader.term) for n in alive]
    probers = [Prober(side.client(n), lives, l_leader.term) for n in alive]
    threads += d_obs + l_obs + probers
    for t in threads:
        t.start()
    _queued(side.client(alive[0]), dies, "candidate-a")
    _queued(side.client(alive[0]), lives, "candidate-b")
    time.sleep(RENEW_S * 1.5)  # a few renewals and reads before the kill
    d_leader.stop.set()  # the leader's process dies with its node: no renew after this
    d_leader.join(timeout=20)
    t_kill = time.monotonic()
    lease_left = d_leader.lease_left_ms(t_kill)
    role = side.owner_label if kind == "owner" else "neither owner nor master"
    log(f"    kill -9 {victim.name} ({role}{side.master_label if victim_is_master else ''}); "
        f"leader's lease left {lease_left:.0f} ms")
    side.kill(victim)
    # until the dying election's observers saw the new leader and a whole lease has passed for
    # the living one (so it was renewed through the new owner), at most lease + 30 s
    deadline = t_kill + LEASE_S + 30
    while time.monotonic() < deadline and not (
            all(o.seen_at for o in d_obs) and time.monotonic() > t_kill + LEASE_S + 1.5):
        time.sleep(0.05)
    t_end = time.monotonic()
    for t in threads:
        t.stop.set()
    reader = side.client(alive[1])
    answered, now, _ = reader.leader(lives)
    reader.close()
    kept = (answered and now == l_leader.term and l_cand.elected_at is None
            and not any(o.seen_at for o in l_obs))
    seen = [o.seen_at for o in d_obs if o.seen_at]
    sample = {
        "kind": kind, "killed": victim.name, "killed_was_master": victim_is_master,
        "lease_left_ms": round(lease_left, 1),
        "lease_left_from_request_ms": round(d_leader.lease_left_ms(t_kill, since_sent=True), 1),
        "failover_ms": round(1000.0 * (min(seen) - t_kill), 1) if seen else None,
        "failover_each_observer_ms": [round(1000.0 * (o.seen_at - t_kill), 1) if o.seen_at
                                      else None for o in d_obs],
        "candidate_elected_ms": (round(1000.0 * (d_cand.elected_at - t_kill), 1)
                                 if d_cand.elected_at else None),
        "survived": kept,
        "reads_unavailable_ms": round(max(p.longest_gap_ms(t_kill, t_end) for p in probers), 1),
        "renew_failures": l_leader.renew_failures,
        "observer_errors": sum(o.errors for o in d_obs + l_obs),
    }
    # the living leader resigns, so its rival's campaign (a 30 s wait) is answered and ends
    l_leader.c.resign(lives, "leader-b")
    for t in threads:
        t.join(timeout=20)
    for c in (d_cand, l_cand):
        c.resign()
    for t in threads:
        t.c.close()
    log(f"    new leader observed after {sample['failover_ms']} ms; the other leadership "
        f"{'kept' if kept else 'LOST'}, reads unavailable {sample['reads_unavailable_ms']} ms; "
        f"starting {victim.name} again")
    side.rejoin(victim, alive[0])
    return sample


def _queued(client, name: str, candidate: str) -> None:
    """Waits (bounded) until `candidate` is queued in election `name`."""
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            answered, _, queued = client.leader(name)
            if answered and candidate in queued:
                return
            time.sleep(0.05)
    finally:
        client.close()
    raise BenchError(f"{candidate} not queued in {name} after 20 s")


def run(peer, kind: str, reps: int, log=print) -> dict:
    """`reps` repetitions of `kind` on a started `plugin-3` or `etcd-3` peer; its figures."""
    samples, errors = [], []
    side = SIDES[peer.name](peer)
    for rep in range(reps):
        try:
            samples.append(repetition(side, kind, rep, log))
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


SIDES = {"plugin-3": PluginSide, "etcd-3": EtcdSide, "zookeeper-3": ZkSide}
