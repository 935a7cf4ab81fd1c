"""Leader elections (docs/API.md "Elections") on a real three-node cluster with the plugin's
default lease settings: one leader at a time while candidates on every node campaign, lead,
resign or let their lease run out; observers on every node long-poll `_observe` and see the
terms rise, wake promptly on resign and expiry, and see the final state; and kill -9 of the
election partition's owner keeps the leader, its term and value (the state is replicated,
docs/ARCHITECTURE.md "Replication"), with every later term larger.

The campaign/observe run is seeded and bounded: `ESLM_ELECTION_SEED` (default 15) fixes every
candidate's choices (not the cluster's timing), RUN_S how long new campaigns start. Leaderships
go into a history (tests/integration/history.py: campaign = acquire, resign = release, renew)
and its checker proves that no two leaderships certainly overlapped and that terms rose in the
order the campaigns were answered."""

from __future__ import annotations

import os
import random
import threading
import time

import pytest
import requests

from cluster_kit import (http, live, owner_of_partition, owner_that_is_not_the_master, rejoin, reporting,
                         served, settled, ThreeNodes)
from history import ACQUIRE, RELEASE, RENEW, History, check, grant_order, holds
from lockclient import unique, wait_until

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("ESLM_ELECTION_SEED") or 15)
RUN_S = 40  # new campaigns start during this long; the run ends when the last leader is done
CANDIDATES = 3  # one per node
LEASE_S = 3  # a leadership's lease, renewed every RENEW_EVERY_S while it leads
RENEW_EVERY_S = 0.5
CAMPAIGN_WAIT_S = 20
OBSERVE_WAIT_S = 5
WAKE_S = 2.0  # resign, expiry or a first leader -> an observe waiting on it answered


# One partition (the default) and no rebalancing: the kill test picks the owner itself.
THREE_NODES = ThreeNodes("eslm-it-elections", {"cluster.routing.rebalance.enable": "none"})


class Candidate:
    """One candidate campaigning through one node until the run's deadline: campaign (waiting),
    lead for a seeded random time while renewing, then resign, or stop renewing and wait until the lease's
    end is known (the term gone from `GET`). Every call goes into the shared history; `ends`
    maps each term to when its end was certainly known (resign answered, expiry seen)."""

    def __init__(self, index, node, name, history, ends):
        self.who, self.node, self.name = f"c{index}", node, name
        self.history, self.ends = history, ends
        self.rng = random.Random(f"{SEED}-{self.who}")
        self.http = requests.Session()
        self.errors: list[str] = []

    def post(self, f, action, body, lease=None):
        op = self.history.invoke(self.who, f, key=self.name, owner=self.who, lease_s=lease, node=self.node.name)
        r = self.http.post(f"{self.node.url}/_elections/{self.name}/_{action}", json=body,
                           timeout=CAMPAIGN_WAIT_S + 10)
        if r.status_code == 200:
            return self.history.ok(op, status="200", token=r.json().get("term", r.json().get("fencing_token"))), r
        self.history.fail(op, status=f"{r.status_code} {r.json()['error']['type']}")
        return op, r

    def run(self, deadline):
        while time.monotonic() < deadline:
            op, r = self.post(ACQUIRE, "campaign", {"candidate": self.who, "value": f"addr-{self.who}",
                                                    "wait": f"{CAMPAIGN_WAIT_S}s", "lease": f"{LEASE_S}s"}, LEASE_S)
            if op.type == "ok":
                self.lead(op.token)
            elif r.json()["error"]["type"] != "lock_wait_timeout_exception":
                self.errors.append(f"campaign: {r.status_code} {r.text[:300]}")
            time.sleep(self.rng.uniform(0.5, 5))  # now and then nobody campaigns: "no leader" states

    def lead(self, term):
        until = time.monotonic() + self.rng.uniform(0.1, 2.0)
        while time.monotonic() < until:
            time.sleep(min(RENEW_EVERY_S, max(0.0, until - time.monotonic())))
            op, r = self.post(RENEW, "renew", {"candidate": self.who, "term": term, "lease": f"{LEASE_S}s"}, LEASE_S)
            if op.type != "ok":
                self.errors.append(f"renew of term {term}: {r.status_code} {r.text[:300]}")
                return
        if self.rng.random() < 0.6:
            op, r = self.post(RELEASE, "resign", {"candidate": self.who, "term": term})
            if op.type != "ok":
                self.errors.append(f"resign of term {term}: {r.status_code} {r.text[:300]}")
            self.ends[term] = ("resign", op.complete)
        else:  # renewals stopped: the lease runs out within LEASE_S of the last renew
            wait_until(lambda: self.state()["term"] != term, LEASE_S + 10, 0.05, message=f"term {term} expired")
            self.ends[term] = ("expiry", time.monotonic())

    def state(self):
        return self.http.get(f"{self.node.url}/_elections/{self.name}", timeout=10).json()


class Observer:
    """Long-polls `_observe?term=<last term seen>` through one node until told to stop and it has
    seen the final state (no leader); records every answer as (sent, answered, term asked, body)."""

    def __init__(self, node, name):
        self.node, self.name = node, name
        self.answers: list[tuple[float, float, int, dict]] = []
        self.http = requests.Session()
        self.errors: list[str] = []

    def run(self, done):
        term, final = 0, False
        while not (final and term == 0):
            final = done.is_set()  # an answer to a request sent after the candidates finished
            sent = time.monotonic()
            r = self.http.get(f"{self.node.url}/_elections/{self.name}/_observe",
                              params={"term": term, "wait": f"{OBSERVE_WAIT_S}s"}, timeout=OBSERVE_WAIT_S + 30)
            if r.status_code != 200:
                self.errors.append(f"observe of term {term}: {r.status_code} {r.text[:300]}")
                return
            self.answers.append((sent, time.monotonic(), term, r.json()))
            term = r.json()["term"]


@pytest.fixture(scope="module")
def run(cluster):
    """Runs the candidates and observers once (seeded, RUN_S) for the two tests that check it."""
    name = unique("election")
    history, ends = History(), {}
    nodes = live(cluster)
    candidates = [Candidate(i, nodes[i % len(nodes)], name, history, ends) for i in range(CANDIDATES)]
    observers = [Observer(n, name) for n in nodes]
    done = threading.Event()
    deadline = time.monotonic() + RUN_S
    threads = [threading.Thread(target=reporting, args=(c.errors, c.run, deadline), daemon=True) for c in candidates]
    watchers = [threading.Thread(target=reporting, args=(o.errors, o.run, done), daemon=True) for o in observers]
    for t in watchers + threads:
        t.start()
    for t in threads:
        t.join(RUN_S + CAMPAIGN_WAIT_S + 3 * LEASE_S + 30)
    done.set()
    for t in watchers:
        t.join(OBSERVE_WAIT_S + 30)
    history.end()
    assert not [t for t in threads + watchers if t.is_alive()], "threads still running after their bound"
    assert [e for c in candidates + observers for e in c.errors] == []
    print(f"\nseed {SEED}: {len(ends)} leaderships, observers answered "
          f"{[len(o.answers) for o in observers]} times")
    return name, history, ends, observers


def leaderships(history):
    """The granted campaigns (certain holds) in the order they were answered."""
    return sorted(holds(history.ops()), key=lambda h: h.certain_start)


def test_exactly_one_leader_at_a_time_and_terms_rise_in_grant_order(cluster, run):
    name, history, ends, _ = run
    report = check(history)
    hs = leaderships(history)
    assert report.violations == [] and grant_order(hs) == [], report.summary(history.started)
    assert len(hs) >= 10, f"seed {SEED}: only {len(hs)} leaderships: the run proved little"
    assert {h.grant.token for h in hs} == set(ends), "every leadership ended by resign or expiry"
    kinds = {kind for kind, _ in ends.values()}
    assert kinds == {"resign", "expiry"}, f"seed {SEED}: ended only by {kinds}"
    for n in live(cluster):
        state = http(n, "GET", f"/_elections/{name}").json()
        assert (state["leader"], state["term"], state["candidates"]) == (None, 0, []), state


def test_observers_see_terms_rise_wake_promptly_and_see_the_final_state(run):
    """What docs/API.md promises an observer: an answer as soon as the term is not the one it
    knows, so it may skip a leadership shorter than its round trip, but the terms it sees only
    rise, each is a real leadership with its leader and value, resign and expiry wake it within
    WAKE_S, a first leader wakes an observer of `term=0` within WAKE_S, and it sees the end."""
    _, history, ends, observers = run
    by_term = {h.grant.token: h for h in leaderships(history)}
    for o in observers:
        # An unchanged answer repeats the term asked (a leadership that outlasted the wait: up to
        # 2 s of leading and a 3 s lease, against OBSERVE_WAIT_S); the terms it is told of rise.
        seen = [body["term"] for _, _, _, body in o.answers if body["term"] and body["changed"]]
        assert seen == sorted(set(seen)), f"{o.node.name}: terms not strictly rising: {seen}"
        assert o.answers[-1][3]["leader"] is None, "the final state: no leader"
        for sent, answered, asked, body in o.answers:
            assert body["changed"] == (body["term"] != asked), (asked, body)
            assert body["changed"] or answered - sent >= OBSERVE_WAIT_S, f"unchanged before the wait ran out: {body}"
            assert_read_fits_the_ledger(body, sent, answered, by_term, ends, history)
            woken_by = ended_at(asked, ends, history) if asked else first_grant_after(sent, history)
            if woken_by is not None and woken_by + WAKE_S < sent + OBSERVE_WAIT_S:
                late = answered - max(sent, woken_by)
                assert late <= WAKE_S, f"{o.node.name}: observe of term {asked} answered {late:.2f}s late"
        gaps = sum(1 for _, _, asked, body in o.answers if asked and not body["term"])
        print(f"{o.node.name}: saw {len(seen)} of {len(by_term)} terms and {gaps} ends with no leader after them")
    hs = leaderships(history)
    idle = [round(b.grant.complete - ended_at(a.grant.token, ends, history), 2) for a, b in zip(hs, hs[1:])]
    print(f"between leaderships: {idle}")


def assert_read_fits_the_ledger(body, sent, answered, by_term, ends, history):
    """The state an observe answered was read at some moment of the request: a leader it names
    led (possibly) then, with its own value; "no leader" means no leadership certainly covered
    the whole request."""
    if body["term"]:
        hold = by_term[body["term"]]
        assert (body["leader"], body["value"]) == (hold.grant.owner, f"addr-{hold.grant.owner}"), body
        assert hold.grant.invoke < answered and ended_at(body["term"], ends, history) > sent, \
            f"term {body['term']} read in [{sent:.3f}, {answered:.3f}], outside its leadership: {hold.grant}"
    else:
        covering = [h.grant for h in by_term.values() if h.certain_start <= sent and h.certain_end >= answered]
        assert covering == [], f"no leader read in [{sent:.3f}, {answered:.3f}] while {covering[0]} led"


def ended_at(term, ends, history):
    """The latest moment leadership `term` may have ended: its resign's answer, or for an
    expiry its last renew's (or campaign's) answer plus the lease."""
    kind, known = ends[term]
    if kind == "resign":
        return known
    ops = [op for op in history.ops() if op.token == term and op.type == "ok" and op.f in (ACQUIRE, RENEW)]
    return max(op.complete for op in ops) + LEASE_S


def first_grant_after(sent, history):
    """When the first campaign answered after `sent` was answered (a leader then certainly
    existed), or None."""
    grants = [op.complete for op in history.ops() if op.f == ACQUIRE and op.type == "ok" and op.complete >= sent]
    return min(grants, default=None)


def campaign(node, name, who, **body):
    r = http(node, "POST", f"/_elections/{name}/_campaign", {"candidate": who, "acquisition": who, **body}, timeout=150)
    assert r.status_code == 200, r.text
    return r.json()


def resign(node, name, who, term):
    r = http(node, "POST", f"/_elections/{name}/_resign", {"candidate": who, "acquisition": who, "term": term})
    assert r.status_code == 200, r.text


def test_kill_9_of_the_owner_keeps_the_leader_and_terms_keep_rising(cluster):
    """The leader (default lease, a value) of an election whose partition's owner is killed -9
    still leads on the promoted replica with its term and value (GET through both survivors), can
    renew, and when it resigns the candidate queued before the kill is elected with a term above
    every earlier one; an observe of the leader's term waiting through the failover is woken by
    that resign, not by the failover, and one of `term=0` on an election with no leader by the
    first leader elected after it (observes are not replicated: their coordinators send them
    again to the new owner, docs/ARCHITECTURE.md "Waiting without threads, and time")."""
    owner, epoch, _ = owner_that_is_not_the_master(cluster)
    settled(owner)
    a, b = [n for n in live(cluster) if n is not owner]
    name = unique("election")
    terms = []
    for i in range(3):  # earlier leaderships: terms the failover must stay above
        terms.append(campaign(a, name, f"early-{i}")["term"])
        resign(b, name, f"early-{i}", terms[-1])
    leader = campaign(a, name, "leader", value="10.0.0.7:5432")
    terms.append(leader["term"])
    empty = unique("election")  # no leader yet: its observer waits for the first one
    queued, observed, first = {}, {}, {}
    threads = [threading.Thread(target=lambda: queued.update(campaign(b, name, "next", value="v-next", wait="120s")),
                                daemon=True),
               threading.Thread(target=lambda: observed.update(r=http(
                   b, "GET", f"/_elections/{name}/_observe?term={leader['term']}&wait=120s", timeout=150)), daemon=True),
               threading.Thread(target=lambda: first.update(r=http(
                   a, "GET", f"/_elections/{empty}/_observe?term=0&wait=120s", timeout=150)), daemon=True)]
    for t in threads:
        t.start()
    wait_until(lambda: http(a, "GET", f"/_elections/{name}").json()["candidates"] == ["next"], 20,
               message="next queued")
    wait_until(lambda: http(owner, "GET", "/_locks/_stats/_local").json()["total"]["watches"] >= 2, 20,
               message="both observes waiting on the owner")

    owner.kill()
    try:
        state = wait_until(lambda: served(a, f"/_elections/{name}"), 60, 0.1, message="the election served again")
        assert (state["leader"], state["value"], state["term"]) == ("leader", "10.0.0.7:5432", leader["term"]), state
        new_owner, new_epoch = owner_of_partition(cluster)
        assert new_owner is not owner and new_epoch > epoch
        assert http(b, "GET", f"/_elections/{name}").json()["term"] == leader["term"]
        assert not observed and not first, f"the failover woke an observer: {observed} {first}"
        elected = campaign(b, empty, "first", value="v-first")
        wait_until(lambda: first, WAKE_S, message="the first leader after the failover woke its observer")
        body = first["r"].json()
        assert (body["changed"], body["leader"], body["value"], body["term"]) == (
            True, "first", "v-first", elected["term"]), body
        resign(a, empty, "first", elected["term"])
        r = http(b, "POST", f"/_elections/{name}/_renew", {"candidate": "leader", "acquisition": "leader", "term": leader["term"]})
        assert r.status_code == 200 and r.json()["fencing_token"] == leader["term"], r.text
        wait_until(lambda: http(a, "GET", f"/_elections/{name}").json()["candidates"] == ["next"], 30,
                   message="next queued again on the new owner")
        resign(a, name, "leader", leader["term"])
        for t in threads:
            t.join(60)
        assert (queued["leader"], queued["value"]) == ("next", "v-next") and queued["term"] > max(terms), (queued, terms)
        assert queued["term"] >> 40 == new_epoch, "the new term carries the new epoch"
        woke = observed["r"]
        assert woke.status_code == 200, woke.text
        assert (woke.json()["changed"], woke.json()["term"]) == (True, queued["term"]), woke.text
        resign(b, name, "next", queued["term"])
        after = campaign(b, name, "after")
        assert after["term"] > queued["term"]
        resign(a, name, "after", after["term"])
    finally:
        rejoin(owner, a)

