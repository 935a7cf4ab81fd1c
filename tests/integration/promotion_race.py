"""The race that a promoted copy's wait decides (docs/ARCHITECTURE.md "Silent owners", "Who takes
over"; docs/RELIABILITY.md "Who may serve"), on a real three-node cluster.

The partition's owner (not the master) is frozen right after its copies last renewed its lease,
its transport is cut (so that, resumed, it learns nothing: no cluster state, no refusal from its
copy), its primary is failed at once through the cluster reroute API (`cancel` with
`allow_primary`, so the failover does not wait for the master's 3.5 s silence bound), and it is
resumed as soon as the replica's node has applied the failure, inside its 800 ms lease (a round
where that took longer says it decided nothing: `Race.decisive`). Meanwhile a client releases a key through the replica's node,
which becomes the owner, and another is granted it; a third client keeps trying the key and
reading it through the old owner's HTTP port.

The cluster runs with `cluster.publish.timeout` 200 ms (`SETTINGS`; Elasticsearch's default is
30 s): the old owner's copy, failed by `cancel` but not marked stale, must be marked stale before
the new owner's first batch can commit, and the master publishes that only once the publication of
the failure to the frozen node has ended; with the default the new owner would serve 30 s later,
long after the old owner's lease, and the wait would decide nothing.

Every answer the old owner gives for the key after the release completed must be a refusal
(503): a conflict naming the released holder, or a read showing it, is the old owner serving
next to the new one. With the protocol, the promoted copy serves only once the old owner's
lease has surely run out (817 ms after the copy's last answer to it), so there is none; a build
whose promoted copy does not wait (the fault-injection library with
`ESLM_FAULT_FLAW=no_promotion_wait`) shows them."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from typing import Callable

import requests

import netcut
from cluster_kit import (
    http,
    native_bound_ms,
    owner_that_is_not_the_master,
    primary_term_in_state_of,
    reroute_once,
    settled,
    started_primary_in_state_of,
    take,
    term_rises,
)
from lockclient import wait_until

#: How long the serving node and the master's state may disagree on the owner before a round starts.
AGREE_S = 60
#: The old owner's lease at most: the copy lease (rust/lock-core/src/ownership/bounds.rs, as the
#: header the plugin is built with has it).
COPY_LEASE_S = native_bound_ms("COPY_LEASE_MS") / 1000
#: How long the replica's node may take to apply the failure, the owner frozen meanwhile, and how
#: long the master's answer may take (its publication ends at the latest at cluster.publish.timeout).
FAILOVER_SEEN_S = 3
REROUTE_ANSWER_S = 45
#: How long the probes run after the resume: past the old owner's lease and the promoted copy's wait.
PROBE_S = 2.5
#: A probe's answer may take the old owner's routing budget (10 s: it retries a refusal of its own
#: partition within it) and a little more.
PROBE_TIMEOUT_S = 15


@dataclasses.dataclass(frozen=True)
class Answer:
    """One answer the old owner gave the probe: a try-lock or a read, when invoked and answered."""

    kind: str
    status: int
    body: dict
    invoked: float
    answered: float

    def shows(self, owner: str) -> bool:
        """Whether the answer says `owner` holds the key (a conflict naming it, a read listing it)."""
        if self.kind == "try" and self.status == 409:
            holders = self.body.get("error", {}).get("holders")
            return owner == holders or (isinstance(holders, list) and owner in holders)
        if self.kind == "read" and self.status == 200:
            return any(h.get("owner") == owner for h in self.body.get("holders", []))
        return False


@dataclasses.dataclass
class Race:
    """What one round saw: the old owner's answers, when the release through the new owner
    completed (None: it did not), the epochs before and after."""

    answers: list[Answer]
    released_at: float | None
    frozen_at: float
    epoch_before: int
    epoch_after: int
    #: From the freeze until the replica's node applied the failure, or None: not within
    #: FAILOVER_SEEN_S (the old owner was then resumed anyway, perhaps past its lease).
    failover_s: float | None
    reroute: str

    def decisive(self) -> bool:
        """Whether the old owner was resumed while its lease may still have run: only then can
        the promoted copy's wait decide anything."""
        return self.failover_s is not None and self.failover_s < COPY_LEASE_S

    def stale(self) -> list[Answer]:
        """The old owner's answers invoked after the release completed that still show the holder."""
        if self.released_at is None:
            return []
        return [a for a in self.answers if a.invoked > self.released_at and a.shows("h1")]


def _ask(session: requests.Session, node, method: str, path: str, body=None):
    try:
        r = session.request(method, node.url + path, json=body, timeout=PROBE_TIMEOUT_S)
        try:
            return r.status_code, r.json()
        except ValueError:
            return r.status_code, {}
    except requests.RequestException:
        return 0, {}


def _probe(old_owner, kind: str, key: str, stop: threading.Event, answers: list[Answer]) -> None:
    """Tries (`try`) or reads (`read`) `key` through the old owner until `stop`: one thread each,
    since a read waits for the partition's batch in flight, which a cut owner may never commit."""
    method, path, body = {
        "try": ("POST", f"/_locks/{key}/_acquire", {"owner": "h3", "acquisition": "h3"}),
        "read": ("GET", f"/_locks/{key}", None),
    }[kind]
    with requests.Session() as s:
        while not stop.is_set():
            invoked = time.monotonic()
            status, answer = _ask(s, old_owner, method, path, body)
            answers.append(Answer(kind, status, answer, invoked, time.monotonic()))


def _epoch(node) -> int:
    """The partition's primary term in `node`'s own cluster state (which must answer)."""
    term = primary_term_in_state_of(node)
    assert term is not None, f"{node.name} did not answer its primary term"
    return term


#: The settings of the clusters that run rounds (see the module's docs).
SETTINGS = {"cluster.routing.rebalance.enable": "none", "cluster.publish.timeout": "200ms"}


def race(cluster, round_no: int) -> Race:
    """One round: see the module's docs. The cluster is back to green (the old owner's copy
    rebuilt) when it returns."""
    return _race(cluster, round_no, *_owner_the_master_agrees_on(cluster))


def rounds_until(one_round: Callable[[int], Race], enough: Callable[[list[Race]], bool], at_least: int,
                 most: int, seconds: float) -> list[Race]:
    """Rounds of `one_round` (given the round's number), each described as it ends: at least
    `at_least`, then more until `enough` of what they saw, for at most `most` rounds and no new
    round once `seconds` have passed. On a loaded machine most rounds fail the owner over slower
    than its lease (a fresh clone's run of all lanes at once on two cores: none of 3 decisive, or
    5 of 6 rounds), and a run whose rounds decided nothing proves nothing; the callers assert what
    the rounds must have shown."""
    done: list[Race] = []
    deadline = time.monotonic() + seconds
    while len(done) < most and (len(done) < at_least or (not enough(done) and time.monotonic() < deadline)):
        done.append(one_round(len(done)))
        print(f"\nround {len(done) - 1}: {describe(done[-1])}", flush=True)
    return done


def any_decisive(races: list[Race]) -> bool:
    return any(r.decisive() for r in races)


def any_stale(races: list[Race]) -> bool:
    return any(r.stale() for r in races)


def _owner_the_master_agrees_on(cluster):
    """(owner, epoch, master) once the node whose diagnostics say it serves the partition is the
    one the elected master's own state has the started primary on: the reroute names the node,
    and while the master moves a copy (off a newly elected master: locks.allocation.avoid_master)
    the two may differ for a moment."""
    deadline = time.monotonic() + AGREE_S
    while True:
        owner, epoch, master = owner_that_is_not_the_master(cluster)
        settled(master)
        seen = started_primary_in_state_of(master)
        if seen == owner.name:
            return owner, epoch, master
        assert time.monotonic() < deadline, \
            f"{owner.name} serves the partition, the master {master.name} has its primary on {seen}"
        time.sleep(0.5)


def _race(cluster, round_no: int, owner, epoch: int, master) -> Race:
    replica = next(n for n in cluster.nodes if n is not owner and n is not master)
    key = f"race-{round_no}-{uuid.uuid4().hex[:6]}"
    take(replica, key, "h1", lease="60s")
    settled(replica)  # nothing in flight: the owner's copies renew its lease by heartbeats alone
    answers: list[Answer] = []
    stop = threading.Event()
    probers = [threading.Thread(target=_probe, args=(owner, kind, key, stop, answers), daemon=True)
               for kind in ("try", "read")]
    released_at = None
    reroute: dict = {}
    assert owner.freeze()
    frozen_at = time.monotonic()
    try:
        netcut.cut(owner)
        cancel = {"cancel": {"index": ".locks", "shard": 0, "node": owner.name, "allow_primary": True}}
        # From a thread, sent once: the master may answer only when its publication has ended
        # (and a publication that failed to commit in time is run again by Elasticsearch, whose
        # second run then finds no copy to cancel). The failure counts once the replica's node
        # applied it, and the owner is resumed then, inside its lease.
        sender = threading.Thread(target=lambda: reroute.update(answer=reroute_once(master, cancel, REROUTE_ANSWER_S)),
                                  daemon=True)
        sender.start()
        failed_over = term_rises(replica, epoch, FAILOVER_SEEN_S)
    finally:
        owner.thaw()
    failover_s = time.monotonic() - frozen_at if failed_over else None
    for prober in probers:
        prober.start()
    try:
        r = http(replica, "POST", f"/_locks/{key}/_release", {"owner": "h1", "acquisition": "h1"}, timeout=30)
        if r.status_code == 200:
            released_at = time.monotonic()
            take(replica, key, "h2")
        time.sleep(max(0.0, frozen_at + PROBE_S - time.monotonic()))  # the probes' time, the fault's span
    finally:
        stop.set()
        for prober in probers:
            prober.join(PROBE_TIMEOUT_S + 5)
        netcut.heal(owner)
    sender.join(REROUTE_ANSWER_S + 5)
    epoch_after = _epoch(replica)
    wait_until(lambda: _green(replica), 120, 0.5, message="the old owner's copy rebuilt")
    http(replica, "POST", f"/_locks/{key}/_release", {"owner": "h2", "acquisition": "h2"})
    status, said = reroute.get("answer", ("no answer", ""))
    return Race(answers, released_at, frozen_at, epoch, epoch_after, failover_s,
                f"{status} {said}; the master's state then: {_shards(master)}")


def _shards(node) -> str:
    return http(node, "GET", "/_cluster/state/routing_table/.locks?local=true").text.strip()


def _green(node) -> bool:
    r = http(node, "GET", "/_cluster/health/.locks?wait_for_status=green&timeout=5s", timeout=10)
    return r.status_code == 200 and not r.json()["timed_out"]


def describe(r: Race) -> str:
    by_status: dict[int, int] = {}
    for a in r.answers:
        by_status[a.status] = by_status.get(a.status, 0) + 1
    release = f"{r.released_at - r.frozen_at:.2f}s" if r.released_at is not None else "never"
    failover = f"{r.failover_s:.2f}s" if r.failover_s is not None else f"not within {FAILOVER_SEEN_S}s"
    return (f"epoch {r.epoch_before} -> {r.epoch_after}; the failure applied on the replica's node {failover}"
            f" after the freeze ({'decisive' if r.decisive() else 'past the lease: decides nothing'}); released"
            f" through the new owner {release} after the freeze; the old owner answered {by_status}; stale: {len(r.stale())}")
