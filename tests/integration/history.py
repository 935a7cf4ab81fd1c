"""A history of lock operations and a checker over it, for the fault test
(tests/integration/test_nemesis.py; rules explained in docs/RELIABILITY.md).

Jepsen's way (jepsen-io/jepsen, `jepsen.checker`): every operation is recorded twice on one
clock, when it is invoked and when it completes, and the checker proves properties of the
recorded history instead of trusting what the servers say about themselves. Completions are
`ok` (it happened), `fail` (it certainly did not happen) or `info` (unknown: a timeout, a reset
connection, a 5xx that is not "unavailable"); the checker never counts an unknown outcome as
having happened, and never counts it as not having happened either.

The clock is `time.monotonic()`, i.e. CLOCK_MONOTONIC on Linux, the clock the nodes' lock cores
read too (Rust `Instant`), so client and server times are comparable on one machine.

Pure Python, no Elasticsearch: `tests/test_history.py` checks the checker on hand-made
histories."""

from __future__ import annotations

import bisect
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

ACQUIRE = "acquire"
RELEASE = "release"
RENEW = "renew"
LOCK_OPS = (ACQUIRE, RELEASE, RENEW)
#: Reads change nothing: a `GET` of a key (`READ`, the tokens of its holders in `shown`), and a
#: watch with wait 0s of one token (`WATCH`, `token` the watched one, `shown` [token] while it
#: holds, [] once it ended).
READ = "read"
WATCH = "watch"
READ_OPS = (READ, WATCH)

# How much earlier than `invoke + lease` a server may end a lease: the lock core counts time in
# whole milliseconds (it truncates), so an expiry can come up to 1 ms before the client's figure.
DEFAULT_LEASE_SLACK_S = 0.005


@dataclass
class Op:
    """One operation: a lock call by a worker (`f` acquire/release), or a fault by the nemesis
    (`f` is the fault's kind, `process` "nemesis"), from invocation to completion."""

    id: int
    process: str
    f: str
    invoke: float
    key: str | None = None
    owner: str | None = None
    lease_s: float | None = None
    node: str | None = None
    complete: float | None = None
    type: str | None = None  # "ok" | "fail" | "info"; None while in flight
    token: int | None = None
    status: str | None = None  # "200", "409 lock_wait_timeout_exception", "ReadTimeout", ...
    detail: str | None = None
    acquisition: str | None = None  # an acquire's id: sent again, it is a re-entrant retry
    shown: list[int] | None = None  # a read's or watch's answer (READ_OPS)

    def __str__(self) -> str:
        done = "…" if self.complete is None else f"{self.complete:.3f}"
        parts = [f"#{self.id} {self.process} {self.f}", f"[{self.invoke:.3f}, {done}]"]
        parts += [f"{name}={value}" for name, value in (
            ("key", self.key), ("owner", self.owner), ("node", self.node), ("type", self.type),
            ("token", self.token), ("status", self.status), ("detail", self.detail),
            ("acquisition", self.acquisition), ("shown", self.shown)) if value is not None]
        return " ".join(parts)


class History:
    """The recorder: thread-safe, one clock. Workers call `invoke` before sending a request and
    `ok`/`fail`/`info` after its answer (or its exception), so the real effect lies somewhere
    inside [invoke, complete]."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._lock = threading.Lock()
        self._ops: list[Op] = []
        self.started = clock()
        self.ended: float | None = None

    def invoke(self, process: str, f: str, **fields) -> Op:
        with self._lock:
            op = Op(id=len(self._ops), process=process, f=f, invoke=self.clock(), **fields)
            self._ops.append(op)
            return op

    def _complete(self, op: Op, type_: str, **fields) -> Op:
        with self._lock:
            assert op.complete is None, f"completed twice: {op}"
            op.complete = self.clock()
            op.type = type_
            for name, value in fields.items():
                setattr(op, name, value)
            return op

    def ok(self, op: Op, **fields) -> Op:
        return self._complete(op, "ok", **fields)

    def fail(self, op: Op, **fields) -> Op:
        return self._complete(op, "fail", **fields)

    def info(self, op: Op, **fields) -> Op:
        return self._complete(op, "info", **fields)

    def end(self) -> None:
        """Marks the end of the recorded window (the availability gaps run up to here)."""
        self.ended = self.clock()

    def ops(self) -> list[Op]:
        with self._lock:
            return list(self._ops)


@dataclass
class Hold:
    """A granted acquire and what is certain about it. The server granted at some moment in
    [acquire.invoke, acquire.complete] and the lease ran from there, so the lock was certainly
    held from the acquire's answer until the earlier of the release's invocation (the release may
    take effect any time after) and `invoke + lease` (the earliest moment the lease may end)."""

    grant: Op
    release: Op | None
    certain_start: float
    certain_end: float
    past_lease: bool  # released (or never released) after its earliest possible expiry
    expiry: float = 0.0  # the earliest moment the lease may end

    @property
    def unchecked(self) -> bool:
        """Answered after its earliest possible expiry: no moment is certain, nothing to check."""
        return self.certain_end <= self.certain_start


@dataclass
class Violation:
    rule: str  # "overlap", "token", "lost renewal", "stale read", "lost holder", "grant order"
    key: str
    first: Op
    second: Op
    why: str

    def __str__(self) -> str:
        return f"{self.rule} on {self.key}: {self.why}\n    {self.first}\n    {self.second}"


@dataclass
class Gap:
    """The longest time a key went without a grant, and where in the run it was."""

    key: str
    seconds: float
    start: float
    end: float


@dataclass
class Report:
    """What `check` found: the violations (expected none) and the run's figures."""

    violations: list[Violation] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    faults: Counter = field(default_factory=Counter)
    past_lease: int = 0
    unchecked: int = 0
    gaps: dict[str, Gap] = field(default_factory=dict)

    def summary(self, origin: float = 0.0) -> str:
        """Human-readable figures; times relative to `origin` (the run's start)."""
        lines = [f"violations: {len(self.violations)}",
                 f"faults: {sum(self.faults.values())} {dict(sorted(self.faults.items()))}",
                 f"grants: {self.counts['grants']} (reentrant {self.counts['reentrant grants']}), "
                 f"past-lease holds: {self.past_lease}, unchecked grants (answered after their earliest "
                 f"expiry): {self.unchecked}, unknown acquires: {self.counts['unknown acquires']}"]
        lines.append(f"reads: {self.counts['reads']}, watches: {self.counts['watches']}, re-entrant retries "
                     f"granted: {self.counts['re-entrant retries']}")
        lines.append(f"releases: {self.counts['releases']}; other outcomes:")
        lines += [f"  {name}: {n}" for name, n in sorted(self.counts.items())
                  if name.startswith((ACQUIRE + " ", RELEASE + " "))]
        for key, gap in sorted(self.gaps.items()):
            lines.append(f"longest gap without a grant on {key}: {gap.seconds:.1f}s "
                         f"(from {gap.start - origin:.1f}s to {gap.end - origin:.1f}s)")
        lines += [str(v) for v in self.violations[:20]]
        return "\n".join(lines)


def holds(ops: Iterable[Op], lease_slack_s: float = DEFAULT_LEASE_SLACK_S) -> list[Hold]:
    """Every granted acquire with its certain interval. A hold ends at its owner's next release
    of the key invoked after the grant's answer; when an owner asks again while holding (a
    reentrant re-grant), both grants are holds ended by the release that follows, and holds of
    one owner never conflict with each other."""
    by_owner_key: dict[tuple, list[Op]] = defaultdict(list)
    for op in sorted(ops, key=lambda o: o.invoke):
        if op.f in LOCK_OPS and (op.f == RELEASE or op.type == "ok"):
            by_owner_key[(op.owner, op.key)].append(op)
    result = []
    for sequence in by_owner_key.values():
        for i, op in enumerate(sequence):
            if op.f != ACQUIRE:
                continue
            release = next((r for r in sequence[i + 1:] if r.f == RELEASE and r.invoke >= op.complete), None)
            expiry = lease_end(op, sequence[i + 1:], release) - lease_slack_s
            end = expiry if release is None else min(release.invoke, expiry)
            past = release is None or release.invoke > expiry
            result.append(Hold(op, release, op.complete, end, past, expiry))
    return result


def lease_end(grant: Op, later: list[Op], release: Op | None) -> float:
    """The earliest moment `grant`'s lease may end: `invoke + lease` of the grant or of its
    latest renew answered 200 (same token, invoked after the grant's answer and before the
    release). A renew that succeeded proves the grant still held when it was invoked, and its
    lease runs from a server moment after that invocation."""
    renews = [r for r in later if r.f == RENEW and r.token == grant.token and r.invoke >= grant.complete
              and (release is None or r.invoke < release.invoke)]
    return max(o.invoke + o.lease_s for o in [grant, *renews])


def overlaps(hs: list[Hold]) -> list[Violation]:
    """Two different owners certainly holding one key at the same moment."""
    found = []
    by_key: dict[str, list[Hold]] = defaultdict(list)
    for h in hs:
        if h.certain_end > h.certain_start:
            by_key[h.grant.key].append(h)
    for key, key_holds in by_key.items():
        active: list[Hold] = []
        for h in sorted(key_holds, key=lambda h: h.certain_start):
            active = [a for a in active if a.certain_end > h.certain_start]
            for a in active:
                if a.grant.owner != h.grant.owner:
                    found.append(Violation("overlap", key, a.grant, h.grant,
                                           f"{a.grant.owner} certainly held it until {a.certain_end:.3f}, "
                                           f"{h.grant.owner} from {h.certain_start:.3f}"))
            active.append(h)
    return found


def token_order(ops: Iterable[Op]) -> list[Violation]:
    """Per key, a grant answered before another was even asked for must carry a smaller token.
    Grants whose [invoke, answer] overlap may have happened in either order, so only the
    real-time order is checked. The one exception is a reentrant re-grant: the same owner gets
    the same token again (the server still counted it as the holder), which it may only when it
    did not certainly release the key in between."""
    ops = list(ops)
    released_between = released_ok_between(ops)
    found = []
    by_key: dict[str, list[Op]] = defaultdict(list)
    for op in ops:
        if op.f == ACQUIRE and op.type == "ok":
            by_key[op.key].append(op)
    for key, grants in by_key.items():
        grants.sort(key=lambda o: o.complete)
        answered = [g.complete for g in grants]
        best: list[Op] = []  # best[i]: the grant with the largest token among grants[0..i]
        for g in grants:
            best.append(g if not best or g.token > best[-1].token else best[-1])
        for g in grants:
            n = bisect.bisect_left(answered, g.invoke)
            if n == 0:
                continue
            before = best[n - 1]
            if before.token > g.token:
                found.append(Violation("token", key, before, g,
                                       f"token {g.token} granted after {before.token} was"))
            elif before.token == g.token and (before.owner != g.owner or released_between(before, g)):
                found.append(Violation("token", key, before, g,
                                       f"token {g.token} granted to {before.owner} and again to {g.owner}"))
    return found


def grant_order(hs: list[Hold]) -> list[Violation]:
    """For exclusive locks (an election's leaderships): each hold certainly covers its own
    answer, and two certain holds never overlap (`overlaps`), so the order of the answers is the
    order of the grants, queued ones included. Tokens (terms) must strictly rise in that order,
    a stronger rule than `token_order`'s real-time one when grants waited side by side."""
    found = []
    by_key: dict[str, list[Hold]] = defaultdict(list)
    for h in hs:
        if not h.unchecked:
            by_key[h.grant.key].append(h)
    for key, key_holds in by_key.items():
        key_holds.sort(key=lambda h: h.certain_start)
        for a, b in zip(key_holds, key_holds[1:]):
            if b.grant.token <= a.grant.token:
                found.append(Violation("grant order", key, a.grant, b.grant,
                                       f"term {b.grant.token} answered after term {a.grant.token}"))
    return found


def lost_renewals(ops: Iterable[Op], lease_slack_s: float = DEFAULT_LEASE_SLACK_S) -> list[Violation]:
    """A renewal answered 404 (`lock_not_held_exception`) although the lease it renews certainly
    still ran for all of it: answered before `invoke + lease` of its grant, or of the latest
    renewal of the same token answered 200 and sent before it. The server decided somewhere
    between the renewal's invocation and its answer; if the lease may have ended by the answer (a
    renewal held up in transit), a 404 is right. Only a server that lost the holder says so
    inside: the lease had not ended, and the owner had not released (it renews only what it holds)."""
    ops = list(ops)
    grants = {(op.owner, op.key, op.token): op for op in ops if op.f == ACQUIRE and op.type == "ok"}
    renewed = defaultdict(list)
    for op in ops:
        if op.f == RENEW and op.type == "ok":
            renewed[(op.owner, op.key, op.token)].append(op)
    found = []
    for op in ops:
        if op.f != RENEW or op.type != "fail" or not (op.status or "").startswith("404"):
            continue
        grant = grants.get((op.owner, op.key, op.token))
        if grant is None:
            continue  # a grant nobody saw answered: nothing is certain about its lease
        earlier = [r for r in renewed[(op.owner, op.key, op.token)] if r.invoke < op.invoke]
        runs_until = max(o.invoke + o.lease_s for o in [grant, *earlier]) - lease_slack_s
        if op.complete < runs_until and grant.complete <= op.invoke:
            found.append(Violation("lost renewal", op.key, grant, op,
                                   f"renewal sent at {op.invoke:.3f} answered {op.status} at {op.complete:.3f} "
                                   f"while the lease ran until at least {runs_until:.3f}"))
    return found

def stale_reads(ops: Iterable[Op], hs: list[Hold]) -> list[Violation]:
    """Reads against what is certain, for exclusive locks (the fault tests' are). A read or watch
    answered 200 may not show a token older than a grant of the key answered before the read was
    sent (that grant ended every older hold), nor a token whose release was answered 200 before
    it was sent; and it must show the token of a hold that is certain for all of its [invoke,
    complete] (a read shows every holder; a watch speaks of its own token only). The first two
    catch an old owner answering from its table after the new one served; the third a holder
    lost, or a read served from a table older than its grant."""
    ops = list(ops)
    grants: dict[str, list[Op]] = defaultdict(list)
    for op in ops:
        if op.f == ACQUIRE and op.type == "ok":
            grants[op.key].append(op)
    newest: dict[str, tuple[list[float], list[Op]]] = {}
    for key, key_grants in grants.items():
        key_grants.sort(key=lambda g: g.complete)
        best: list[Op] = []
        for g in key_grants:
            best.append(g if not best or g.token > best[-1].token else best[-1])
        newest[key] = ([g.complete for g in key_grants], best)
    released = {}
    for op in ops:
        if op.f == RELEASE and op.type == "ok" and op.token is not None:
            released[(op.key, op.token)] = min(op.complete, released.get((op.key, op.token), op.complete))
    certain: dict[str, list[Hold]] = defaultdict(list)
    for h in hs:
        if not h.unchecked:
            certain[h.grant.key].append(h)
    found = []
    for read in (op for op in ops if op.f in READ_OPS and op.type == "ok"):
        found += _stale(read, newest.get(read.key), released) + _missing(read, certain[read.key])
    return found


def _stale(read: Op, newest: tuple[list[float], list[Op]] | None, released: dict) -> list[Violation]:
    """What `read` shows that had certainly ended before it was sent."""
    found = []
    for token in read.shown or []:
        if newest is not None:
            answered, best = newest
            n = bisect.bisect_left(answered, read.invoke)
            if n > 0 and best[n - 1].token > token:
                found.append(Violation("stale read", read.key, best[n - 1], read,
                                       f"token {token} shown after token {best[n - 1].token} was granted"))
        ended = released.get((read.key, token))
        if ended is not None and ended < read.invoke:
            found.append(Violation("stale read", read.key, read, read,
                                   f"token {token} shown after its release was answered at {ended:.3f}"))
    return found


def _missing(read: Op, key_holds: list[Hold]) -> list[Violation]:
    """The certain holds of the key over all of `read` that it does not show."""
    return [Violation("lost holder", read.key, h.grant, read,
                      f"token {h.grant.token} certainly held from {h.certain_start:.3f} to {h.certain_end:.3f}, "
                      f"the {read.f} showed {read.shown}")
            for h in key_holds
            if h.certain_start <= read.invoke and read.complete <= h.certain_end
            and (read.f == READ or h.grant.token == read.token) and h.grant.token not in (read.shown or [])]


def reentrant_retries(ops: Iterable[Op], hs: list[Hold],
                      ids_unkept: Iterable[tuple[float, float]] = ()) -> list[Violation]:
    """An acquire sent again under a grant's `acquisition` while that grant is certainly held (for
    all of the retry's [invoke, complete]) gets that grant back (docs/API.md "Acquisitions"): a
    200 with another token means the server had lost the grant. Grants held during a window of
    `ids_unkept` are left out: while a cluster mixes plugins with and without acquisitions, a
    failover keeps no ids (docs/OPERATIONS.md "Upgrading from a plugin without acquisitions"), and
    the retry is then a new acquisition of the held lock, granted under a newer token."""
    windows = list(ids_unkept)
    by_acquisition: dict[str, list[Hold]] = defaultdict(list)
    for h in hs:
        in_window = any(h.grant.invoke <= end and start <= h.certain_end for start, end in windows)
        if h.grant.acquisition is not None and not h.unchecked and not in_window:
            by_acquisition[h.grant.acquisition].append(h)
    found = []
    for op in ops:
        if op.f != ACQUIRE or op.type != "ok" or op.acquisition is None:
            continue
        for h in by_acquisition[op.acquisition]:
            if h.grant is not op and h.certain_start <= op.invoke and op.complete <= h.certain_end \
                    and op.token != h.grant.token:
                found.append(Violation("lost holder", op.key, h.grant, op,
                                       f"retry of {op.acquisition} answered token {op.token} while "
                                       f"{h.grant.token} was certainly held"))
    return found


def released_ok_between(ops: Iterable[Op]) -> Callable[[Op, Op], bool]:
    """Whether the owner of grant `a` certainly released the key between `a` and grant `b`
    (a release answered 200 inside [a's answer, b's invocation]): then `b` is a new grant and
    not a reentrant one, and may not reuse `a`'s token."""
    releases: dict[tuple, list[Op]] = defaultdict(list)
    for op in ops:
        if op.f == RELEASE and op.type == "ok":
            releases[(op.owner, op.key)].append(op)

    def between(a: Op, b: Op) -> bool:
        return any(a.complete <= r.invoke and r.complete <= b.invoke for r in releases[(a.owner, a.key)])
    return between


@dataclass(frozen=True)
class AfterFault:
    """What followed one fault: `to_grant_s`, from its start to the answer of the first new grant
    (not a re-entrant one) asked for after it started (how long the locks were unavailable to a new request; None when
    none came before the run ended); `asked_s`, from its start until a request asked for after it
    started was waiting on a key free of every certain hold (0 when one was asked for a free key
    at once; None when none was: before that no grant could come whatever the fault, the keys
    being held or nobody asking for a free one); `to_green_s`, from its end (its heal) to the
    first moment `.locks` was seen green again, every copy started (None when never seen);
    `until_next_s`, from its start to the next fault's (None for the last): only requests asked
    for before then count for `asked_s`, since a later one may be waiting on the next fault."""

    kind: str
    target: str
    at: float
    lasted_s: float
    to_grant_s: float | None
    to_green_s: float | None
    asked_s: float | None = 0.0
    detail: str = ""
    until_next_s: float | None = None


def after_faults(ops: Iterable[Op], green_at: list[float]) -> list[AfterFault]:
    """For each fault the nemesis made (type ok), what followed it (`AfterFault`), from the
    requests sent through other nodes than the one it hit: a client of a frozen or cut-off node
    waits for it whatever the plugin does, and goes to another node (docs/RELIABILITY.md
    "Availability" measures the same way)."""
    ops = list(ops)
    greens = sorted(green_at)
    certain = [h for h in holds(ops) if not h.unchecked]
    acquires = [op for op in ops if op.f == ACQUIRE]
    out = []
    faults = [op for op in ops if op.process == "nemesis" and op.type == "ok"]
    for fault, following in zip(faults, [*faults[1:], None]):
        end = fault.complete if fault.complete is not None else fault.invoke
        elsewhere = [op for op in acquires if fault.node is None or op.node != fault.node]
        before_next = [op for op in elsewhere if following is None or op.invoke < following.invoke]
        answered = [op.complete for op in elsewhere if _new_grant(op) and op.invoke >= fault.invoke]
        i = bisect.bisect_left(greens, end)
        out.append(AfterFault(
            kind=fault.f, target=str(fault.status), at=fault.invoke, lasted_s=end - fault.invoke,
            to_grant_s=min(answered) - fault.invoke if answered else None,
            to_green_s=greens[i] - end if i < len(greens) else None,
            asked_s=_asked_for_free(fault.invoke, before_next, certain),
            detail=fault.detail or "",
            until_next_s=None if following is None else following.invoke - fault.invoke))
    return out


def _new_grant(op: Op) -> bool:
    """A grant answered 200 that is not a re-entrant one (which gives back a grant made before,
    e.g. to a holder's retry, and says nothing of whether a new request would be served)."""
    return op.f == ACQUIRE and op.type == "ok" and op.detail != "reentrant"


def _asked_for_free(start: float, acquires: list[Op], certain: list[Hold]) -> float | None:
    """How long after `start` an acquire asked for at or after it first waited on a key free of
    every certain hold: when its key was free at its invocation, or became free before its answer
    (None: no such acquire)."""
    moments = []
    for a in acquires:
        if a.invoke >= start:
            free = a.invoke + _held_for(a.key, a.invoke, certain)
            if a.complete is None or free <= a.complete:
                moments.append(free)
    return min(moments) - start if moments else None


def _held_for(key: str, at: float, certain: list[Hold]) -> float:
    """How long after `at` holds kept `key` from a new request without a break (0: free at `at`),
    each from its answer until its lease may end or, released before, until its release was
    answered: a release takes effect at some moment before its answer (one sent through a node
    that is cut off lands when the cut heals), so only then is the key surely free."""
    until = at
    for h in sorted((h for h in certain if h.grant.key == key), key=lambda h: h.certain_start):
        if h.certain_start <= until < _blocks_until(h):
            until = _blocks_until(h)
    return until - at


def _blocks_until(h: Hold) -> float:
    if h.release is None or h.past_lease:
        return h.certain_end
    return h.expiry if h.release.complete is None else min(h.release.complete, h.expiry)


def longest_gaps(ops: Iterable[Op], start: float, end: float, keys: Iterable[str] = (),
                 faults: Iterable[tuple[float, float]] = ()) -> dict[str, Gap]:
    """Per key (those of the history and `keys`, which may never have been granted), the longest
    stretch of the window [start, end] without any new grant answered (re-entrant ones, and
    grants outside the window, ignored).
    With `faults` (each a (start, end) interval), a stretch counts only its time outside every
    fault: back-to-back faults add up to a long stretch without grants that no single fault
    explains, and what a liveness bound is about is the time the cluster had to recover."""
    intervals = sorted(faults)
    times: dict[str, list[float]] = {k: [] for k in keys}
    for op in ops:
        if _new_grant(op) and start <= op.complete <= end:
            times.setdefault(op.key, []).append(op.complete)
    gaps = {}
    for key, ts in times.items():
        points = [start, *sorted(ts), end]
        spans = [Gap(key, b - a - _covered(a, b, intervals), a, b) for a, b in zip(points, points[1:])]
        gaps[key] = max(spans, key=lambda g: g.seconds)
    return gaps


def longest_gap_of_any(ops: Iterable[Op], start: float, end: float, label: str = "any key") -> Gap:
    """The longest stretch of [start, end] in which no key of `ops` had a new grant answered. Over
    the probers' fresh keys, which no hold puts off, that is how long the locks were not granted
    at all: the time from a fault's start to its next grant misses an outage that begins after a
    grant made in the fault's first moments (an owner frozen still grants until its lease ends)."""
    return longest_gaps((replace(op, key=label) for op in ops), start, end, [label])[label]


def _covered(a: float, b: float, intervals: list[tuple[float, float]]) -> float:
    """How much of [a, b] lies inside the union of `intervals` (sorted by their start)."""
    covered, reach = 0.0, a
    for lo, hi in intervals:
        lo, hi = max(lo, reach), min(hi, b)
        if hi > lo:
            covered += hi - lo
            reach = hi
    return covered


def tally(ops: Iterable[Op]) -> tuple[Counter, Counter]:
    """Counts of lock outcomes (grants, releases, failures by status) and of faults by kind."""
    counts: Counter = Counter()
    faults: Counter = Counter()
    retried = set()
    for op in ops:
        if op.f in READ_OPS:
            counts[{READ: "reads", WATCH: "watches"}[op.f] if op.type == "ok"
                   else f"{op.f} {op.type or 'in flight'} {op.status}"] += 1
        elif op.f not in LOCK_OPS:
            faults[op.f] += 1
        elif op.f == ACQUIRE and op.type == "ok":
            counts["grants"] += 1
            if op.detail == "reentrant":
                counts["reentrant grants"] += 1
            if op.acquisition is not None:
                counts["re-entrant retries"] += op.acquisition in retried
                retried.add(op.acquisition)
        elif op.f == RELEASE and op.type == "ok":
            counts["releases"] += 1
        elif op.f == RENEW and op.type == "ok":
            counts["renews"] += 1
        else:
            counts[f"{op.f} {op.type or 'in flight'} {op.status}"] += 1
            if op.f == ACQUIRE and op.type != "fail":
                counts["unknown acquires"] += 1
    return counts, faults


def check(history: History | list[Op], lease_slack_s: float = DEFAULT_LEASE_SLACK_S,
          start: float | None = None, end: float | None = None, keys: Iterable[str] = (),
          ids_unkept: Iterable[tuple[float, float]] = ()) -> Report:
    """Runs every rule over a history. Acquires still in flight or with an unknown outcome are
    never treated as grants; releases of any outcome end a hold at their invocation.
    `ids_unkept`: windows in which the cluster mixed plugins with and without acquisition ids
    (see `reentrant_retries`)."""
    ops = history.ops() if isinstance(history, History) else list(history)
    if isinstance(history, History):
        start = history.started if start is None else start
        end = history.ended if end is None else end
    times = [t for op in ops for t in (op.invoke, op.complete) if t is not None]
    start = min(times, default=0.0) if start is None else start
    end = max(times, default=0.0) if end is None else end
    hs = holds(ops, lease_slack_s)
    counts, faults = tally(ops)
    return Report(violations=overlaps(hs) + token_order(ops) + lost_renewals(ops, lease_slack_s)
                  + stale_reads(ops, hs) + reentrant_retries(ops, hs, ids_unkept),
                  counts=counts, faults=faults,
                  past_lease=sum(h.past_lease and not h.unchecked for h in hs),
                  unchecked=sum(h.unchecked for h in hs), gaps=longest_gaps(ops, start, end, keys))
