"""Counting semaphores (docs/API.md "Semaphores", docs/LOCK_CORE.md "Semaphores") on real
nodes over HTTP: the limit is never exceeded under 50 concurrent clients (checked by a ledger
at every grant), FIFO with mixed permit sizes, permits back when a lease runs out, the limit
fixed while in use (409) unless changed by `_limit` (nothing revoked), bad input (400 naming
the field), `_cat/semaphores` and stats. The three-node test is in test_semaphores_cluster.py
(one node or cluster at a time)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from lockclient import LockClient, assert_error, enc, ok, unique, wait_until


def sem_call(lc: LockClient, name: str, action: str, owner, timeout=None, **fields):
    return lc.call("POST", f"/_semaphores/{enc(name)}/_{action}", LockClient._body(owner, LockClient._named(owner, fields)),
                   timeout=timeout)


def sem_state(lc: LockClient, name: str) -> dict:
    return ok(lc.call("GET", f"/_semaphores/{enc(name)}"))


def waiting_owners(lc: LockClient, name: str) -> list[str]:
    return [w["owner"] for w in sem_state(lc, name)["waiters"]]


class Ledger:
    """Who holds how many permits, by the clients' own account: a client adds its permits when
    it is granted and takes them off just before it releases, so the sum can only be too high,
    never too low; it must never exceed the limit."""

    def __init__(self, limit: int):
        self.limit = limit
        self.lock = threading.Lock()
        self.held: dict[str, int] = {}
        self.max_seen = 0
        self.grants = 0

    def granted(self, owner: str, permits: int) -> None:
        with self.lock:
            self.held[owner] = permits
            total = sum(self.held.values())
            self.max_seen = max(self.max_seen, total)
            self.grants += 1
            assert total <= self.limit, f"{total} permits held over the limit {self.limit}: {self.held}"

    def releasing(self, owner: str) -> None:
        with self.lock:
            del self.held[owner]


# --- acquire, answers, release ------------------------------------------------------------

def test_acquire_answers_permits_limit_and_a_token_and_get_shows_holders(locks):
    s, a, b = unique("sem"), unique("owner"), unique("owner")
    g = ok(sem_call(locks, s, "acquire", a, permits=2, limit=3, lease="10s"))
    assert g["acquired"] is True and g["reentrant"] is False
    assert (g["key"], g["owner"], g["scope"], g["permits"], g["limit"]) == (s, a, "semaphore", 2, 3)
    assert "mode" not in g, "a semaphore has permits, not modes"
    assert isinstance(g["fencing_token"], int) and 5_000 < g["lease_ms"] <= 10_000
    g2 = ok(sem_call(locks, s, "acquire", b, limit=3))
    assert g2["permits"] == 1, "permits default to 1"
    assert g2["fencing_token"] > g["fencing_token"]
    state = sem_state(locks, s)
    assert state["limit"] == 3 and state["scope"] == "semaphore"
    assert sorted((h["owner"], h["permits"]) for h in state["holders"]) == sorted([(a, 2), (b, 1)])
    assert_error(sem_call(locks, s, "acquire", unique("owner"), limit=3), 409, "lock_conflict_exception", s)
    again = ok(sem_call(locks, s, "acquire", a, permits=2, limit=3))
    assert again["reentrant"] is True and again["fencing_token"] == g["fencing_token"]
    ok(sem_call(locks, s, "renew", a, lease="20s", fencing_token=g["fencing_token"]))
    assert ok(sem_call(locks, s, "release", a, fencing_token=g["fencing_token"]))["released"] is True
    ok(sem_call(locks, s, "release", b))
    assert sem_state(locks, s)["holders"] == [] and "limit" not in sem_state(locks, s)
    assert locks.state(s)["holders"] == [], "lock [s] is another key than semaphore [s]"


def test_a_semaphore_and_a_lock_of_the_same_name_are_independent(locks):
    name, a, b = unique("sem"), unique("owner"), unique("owner")
    ok(sem_call(locks, name, "acquire", a, limit=1))
    ok(locks.acquire(name, b))
    assert_error(sem_call(locks, name, "release", b), 404, "lock_not_held_exception")
    ok(locks.release(name, b))
    ok(sem_call(locks, name, "release", a))


def test_limit_mismatch_while_in_use_is_409_naming_limit(locks):
    s, a = unique("sem"), unique("owner")
    ok(sem_call(locks, s, "acquire", a, limit=4))
    err = assert_error(sem_call(locks, s, "acquire", unique("owner"), limit=5), 409,
                       "semaphore_limit_mismatch_exception", "limit")
    assert err["limit"] == "4", err
    ok(sem_call(locks, s, "release", a))
    g = ok(sem_call(locks, s, "acquire", unique("owner"), limit=5))
    assert g["limit"] == 5, "an unused semaphore takes the next acquirer's limit"


def test_wait_timeout_is_409_as_for_locks(locks):
    s = unique("sem")
    ok(sem_call(locks, s, "acquire", unique("owner"), limit=1))
    started = time.monotonic()
    assert_error(sem_call(locks, s, "acquire", unique("owner"), limit=1, wait="300ms"), 409,
                 "lock_wait_timeout_exception")
    assert time.monotonic() - started >= 0.25


@pytest.mark.parametrize("body, field", [
    ({"owner": "o", "limit": 3, "permits": 4}, "permits"),
    ({"owner": "o", "limit": 3, "permits": 0}, "permits"),
    ({"owner": "o", "limit": 0}, "limit"),
    ({"owner": "o", "limit": 70000}, "limit"),
    ({"owner": "o"}, "limit"),
    ({"limit": 3}, "owner"),
    ({"owner": "o", "limit": 3, "mode": "shared"}, "mode"),
    ({"owner": "o", "limit": 3, "scope": "key"}, "scope"),
    ({"owner": "o", "limit": 3, "wait": "soon"}, "wait"),
    ({"owner": "o", "limit": 3, "routing": "r"}, "routing"),
])
def test_bad_acquire_bodies_are_400_naming_the_field(locks, body, field):
    r = locks.call("POST", f"/_semaphores/{unique('sem')}/_acquire", body)
    assert r.status_code == 400, r.text
    assert field in r.text, r.text


def test_bad_release_and_renew_bodies_and_scope_on_locks_are_400(locks):
    s = unique("sem")
    for action in ("release", "renew"):
        r = locks.call("POST", f"/_semaphores/{s}/_{action}", {"owner": "o", "permits": 1})
        assert r.status_code == 400 and "permits" in r.text, r.text
    assert_error(locks.call("POST", f"/_semaphores/{s}/_release", {}), 400, "illegal_argument_exception", "owner")
    r = locks.acquire(unique(), unique("owner"), scope="semaphore")
    assert_error(r, 400, "illegal_argument_exception", "scope")


# --- FIFO, leases -------------------------------------------------------------------------

def test_fifo_with_mixed_permit_sizes(locks, single_node):
    """Limit 4: a holds 3. "big" asks for 4, then three small ones for 1 each. A free permit is
    not given to the small ones while big waits ahead; when a releases, big goes first, then the
    small ones in their order as permits come back."""
    s, a = unique("sem"), unique("owner")
    ok(sem_call(locks, s, "acquire", a, permits=3, limit=4, lease="60s"))
    order: list[str] = []
    answers: dict[str, requests.Response] = {}
    lock = threading.Lock()

    def wait_for(owner, permits):
        lc = LockClient(single_node.url)
        try:
            r = sem_call(lc, s, "acquire", owner, permits=permits, limit=4, wait="30s", lease="60s", timeout=60)
            with lock:
                order.append(owner)
                answers[owner] = r
        finally:
            lc.close()

    names = ["big", "small-1", "small-2", "small-3"]
    threads = []
    for name, permits in zip(names, [4, 1, 1, 1]):
        t = threading.Thread(target=wait_for, args=(name, permits))
        t.start()
        threads.append(t)
        wait_until(lambda n=name: n in waiting_owners(locks, s), 10, message=f"{name} queued")
    assert waiting_owners(locks, s) == names, "queue order is arrival order"
    assert order == [], "one permit is free but big waits first: nobody is granted"
    ok(sem_call(locks, s, "release", a))
    wait_until(lambda: order == ["big"], 10, message="big granted first")
    assert answers["big"].json()["permits"] == 4
    assert waiting_owners(locks, s) == names[1:]
    ok(sem_call(locks, s, "release", "big"))
    wait_until(lambda: len(order) == 4, 10, message="the small ones granted")
    for t in threads:
        t.join(10)
    assert order[0] == "big" and sorted(order[1:]) == names[1:]
    tokens = [answers[n].json()["fencing_token"] for n in names]
    assert tokens == sorted(tokens), "hand-offs in queue order carry increasing tokens"


def test_permits_come_back_when_a_lease_runs_out(locks):
    s, dead, waiter = unique("sem"), unique("owner"), unique("owner")
    ok(sem_call(locks, s, "acquire", dead, permits=2, limit=2, lease="1s"))
    started = time.monotonic()
    g = ok(sem_call(locks, s, "acquire", waiter, permits=2, limit=2, wait="20s", timeout=30))
    waited = time.monotonic() - started
    assert 0.5 <= waited < 10, f"granted after {waited:.2f}s: when the 1s lease ran out"
    assert g["waited_ms"] >= 500 and g["permits"] == 2
    assert [h["owner"] for h in sem_state(locks, s)["holders"]] == [waiter]


def limit_call(lc: LockClient, name: str, body) -> requests.Response:
    return lc.call("POST", f"/_semaphores/{enc(name)}/_limit", body)


def test_a_lowered_limit_revokes_nothing_and_grants_only_below_it(locks, single_node):
    """a holds 3 of 4, b waits for 2. The limit goes to 2: a keeps its 3 permits (and renews),
    b still waits; an acquire naming the old limit is 409; when a releases, b is granted under
    the new limit. Raised to 3 while c waits for 1: c is granted at once."""
    s, a = unique("sem"), unique("owner")
    ok(sem_call(locks, s, "acquire", a, permits=3, limit=4, lease="60s"))
    answer: dict[str, requests.Response] = {}

    def wait_for(owner, permits, limit):
        lc = LockClient(single_node.url)
        try:
            answer[owner] = sem_call(lc, s, "acquire", owner, permits=permits, limit=limit, wait="30s",
                                     lease="60s", timeout=60)
        finally:
            lc.close()

    b = threading.Thread(target=wait_for, args=("b", 2, 4))
    b.start()
    wait_until(lambda: waiting_owners(locks, s) == ["b"], 10, message="b queued")
    changed = ok(limit_call(locks, s, {"limit": 2}))
    assert changed == {"key": s, "limit": 2, "previous": 4, "held": 3}, changed
    state = sem_state(locks, s)
    assert state["limit"] == 2 and [(h["owner"], h["permits"]) for h in state["holders"]] == [(a, 3)], state
    ok(sem_call(locks, s, "renew", a, lease="60s"))
    err = assert_error(sem_call(locks, s, "acquire", unique("owner"), limit=4), 409,
                       "semaphore_limit_mismatch_exception", "limit")
    assert err["limit"] == "2", err
    assert waiting_owners(locks, s) == ["b"] and "b" not in answer
    ok(sem_call(locks, s, "release", a))
    b.join(20)
    g = ok(answer["b"])
    assert (g["permits"], g["limit"], g["remaining"]) == (2, 2, 0), g
    c = threading.Thread(target=wait_for, args=("c", 1, 2))
    c.start()
    wait_until(lambda: waiting_owners(locks, s) == ["c"], 10, message="c queued")
    assert ok(limit_call(locks, s, {"limit": 3}))["previous"] == 2
    c.join(20)
    assert (ok(answer["c"])["limit"], ok(answer["c"])["remaining"]) == (3, 0)
    for owner in ("b", "c"):
        ok(sem_call(locks, s, "release", owner))


@pytest.mark.parametrize("body, field", [
    ({}, "limit"),
    ({"limit": 0}, "limit"),
    ({"limit": 70000}, "limit"),
    ({"limit": "many"}, "limit"),
    ({"limit": 2, "owner": "o"}, "owner"),
])
def test_bad_limit_bodies_are_400_naming_the_field(locks, body, field):
    s = unique("sem")
    ok(sem_call(locks, s, "acquire", unique("owner"), limit=3))
    r = limit_call(locks, s, body)
    assert r.status_code == 400, r.text
    assert field in r.text, r.text
    assert sem_state(locks, s)["limit"] == 3, "a refused change changed nothing"


def test_a_limit_change_on_an_unused_semaphore_or_below_a_waiter_is_refused(locks, single_node):
    s = unique("sem")
    assert_error(limit_call(locks, s, {"limit": 2}), 404, "lock_not_held_exception")
    ok(sem_call(locks, s, "acquire", "a", limit=5))
    waiter = threading.Thread(target=lambda: sem_call(LockClient(single_node.url), s, "acquire", "w", permits=5,
                                                      limit=5, wait="2s", timeout=30))
    waiter.start()
    wait_until(lambda: waiting_owners(locks, s) == ["w"], 10, message="w queued")
    err = assert_error(limit_call(locks, s, {"limit": 4}), 400, "illegal_argument_exception", "limit")
    assert "[w] waits for [5] permits" in err["reason"], err
    waiter.join(10)
    ok(sem_call(locks, s, "release", "a"))


def test_permits_never_exceed_the_limit_under_50_concurrent_clients(single_node):
    """50 clients, each acquiring 1..3 permits of a limit-5 semaphore (waiting), holding briefly
    and releasing, 4 rounds each; the ledger checks the sum at every grant, and the node's own
    view (GET) is sampled meanwhile and must never show more than the limit either."""
    s, limit = unique("sem"), 5
    ledger = Ledger(limit)
    stop = threading.Event()
    node_max = [0]

    def sample():
        lc = LockClient(single_node.url)
        try:
            while not stop.is_set():
                held = sum(h["permits"] for h in sem_state(lc, s)["holders"])
                node_max[0] = max(node_max[0], held)
                assert held <= limit, f"the node shows {held} permits held"
        finally:
            lc.close()

    def client(i):
        lc = LockClient(single_node.url)
        owner, permits = f"c{i}", 1 + i % 3
        try:
            for _ in range(4):
                g = ok(sem_call(lc, s, "acquire", owner, permits=permits, limit=limit, wait="60s",
                                lease="30s", timeout=90))
                ledger.granted(owner, g["permits"])
                time.sleep(0.005)  # hold briefly: the work under the permits
                ledger.releasing(owner)
                ok(sem_call(lc, s, "release", owner, fencing_token=g["fencing_token"]))
        finally:
            lc.close()

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        with ThreadPoolExecutor(max_workers=50) as ex:
            for f in [ex.submit(client, i) for i in range(50)]:
                f.result(timeout=180)
    finally:
        stop.set()
        sampler.join(30)
    assert ledger.grants == 200
    assert 1 < ledger.max_seen <= limit, ledger.max_seen
    assert node_max[0] <= limit


# --- listing, stats ------------------------------------------------------------------------

def test_cat_semaphores_lists_grants_with_permits_and_stats_count_them(locks):
    s, a, b = unique("sem"), unique("owner"), unique("owner")
    before = ok(locks.stats())["total"]
    ok(sem_call(locks, s, "acquire", a, permits=2, limit=3))
    ok(sem_call(locks, s, "acquire", b, permits=1, limit=3))
    ok(locks.acquire(s, a))
    rows = ok(locks.call("GET", "/_cat/semaphores", params={"format": "json", "prefix": s}))
    assert sorted((r["name"], r["owner"], str(r["permits"]), str(r["limit"])) for r in rows) == \
        sorted([(s, a, "2", "3"), (s, b, "1", "3")]), rows
    text = locks.call("GET", "/_cat/semaphores", params={"v": "true", "prefix": s}).text
    assert text.split()[:8] == ["name", "owner", "permits", "limit", "token", "lease_ms", "held_ms", "node"]
    total = ok(locks.stats())["total"]
    assert total["semaphore_grants"] >= before.get("semaphore_grants", 0) + 2
    assert total["held_permits"] >= 3
    parts = ok(locks.diagnostics())["core"]["partitions"]
    assert sum(p["held_permits"] for p in parts) >= 3
    ok(sem_call(locks, s, "release", a))
    ok(sem_call(locks, s, "release", b))
    ok(locks.release(s, a))


def test_a_force_release_returns_every_permit_and_grants_the_waiter(locks):
    """docs/API.md "Administration": evicting a semaphore's holders (scope `semaphore`) gives
    their permits back at once; the waiter that needed them is granted with a larger token, and
    an evicted holder's renew answers 404."""
    s = unique("sem")
    held = [ok(sem_call(locks, s, "acquire", who, permits=2, limit=4, lease="5m"))["fencing_token"]
            for who in ("a", "b")]
    waiting = ThreadPoolExecutor(1).submit(
        lambda: sem_call(locks, s, "acquire", "c", permits=3, limit=4, wait="20s", timeout=30))
    wait_until(lambda: waiting_owners(locks, s) == ["c"], 10, message="c queued")
    assert_error(locks.force_release(s), 404, "lock_not_held_exception")  # the key scope: nothing held
    evicted = ok(locks.force_release(s, scope="semaphore", reason="workers gone"))
    assert sorted((r["owner"], r["fencing_token"]) for r in evicted["released"]) == \
        [("a", held[0]), ("b", held[1])]
    granted = ok(waiting.result(timeout=5))
    assert granted["fencing_token"] > max(held)
    assert [(h["owner"], h["permits"]) for h in sem_state(locks, s)["holders"]] == [("c", 3)]
    assert_error(sem_call(locks, s, "renew", "a"), 404, "lock_not_held_exception")
    ok(sem_call(locks, s, "release", "c"))


def test_a_force_release_names_the_scopes_it_takes(locks):
    assert_error(locks.force_release(unique("sem"), scope="queue"), 400, "illegal_argument_exception",
                 "[scope] must be one of [key, tree, semaphore, election]")
