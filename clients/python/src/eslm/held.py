"""A held lock: its grants and fencing token, renewal, release, and the lost-lock signal.

`HandleBase` holds what the sync `HeldLock` (here, with a watchdog thread) and the asyncio
`AsyncHeldLock` (eslm/aio.py, with a watchdog task) share: every request and every decision
about a loss, as operations of eslm/steps.py."""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import logging
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable

from . import documents, fenced, steps
from .durations import to_millis
from .errors import BadRequest, GrantExpired, InvalidArgument, LockError, LockLost, LockNotHeld
from .options import ELECTION, LockOptions, keyed_body, path_of

log = logging.getLogger("eslm")


@dataclass(frozen=True)
class Grant:
    """One granted lock: what the server answered for one key."""

    key: str
    mode: str
    scope: str
    fencing_token: int

    @classmethod
    def all_of(cls, options: LockOptions, answer: dict) -> tuple["Grant", ...]:
        if options.election:  # a campaign's answer: the name, and the term as the token
            return (cls(answer["name"], "exclusive", ELECTION, answer["term"]),)
        entries = answer["locks"] if options.multi else [answer]
        # A semaphore's grant has permits rather than a mode.
        return tuple(cls(e["key"], e.get("mode", ""), e["scope"], e["fencing_token"]) for e in entries)


def holders_of(state: dict) -> list[dict]:
    """The holders in a `GET` answer of a key or semaphore, intention locks left out."""
    return [h for h in state.get("holders", []) if not h.get("intention")]


class Holds:
    """The locks this client holds now, counted per (owner, key, scope): the server answers a
    second acquire of a held lock by the same owner with the same grant (`"reentrant": true`),
    and only the outermost block may release it. An answer `reentrant` for a lock this client
    does not count (a retry whose first attempt was granted unseen) is an ordinary grant."""

    def __init__(self):
        self._counts: dict[tuple[str, str, str], int] = {}
        # The acquisition id of each lock counted (docs/API.md "Acquisitions").
        self._acquisitions: dict[tuple[str, str, str], str | None] = {}
        self._mutex = threading.Lock()

    def acquisition_of(self, owner: str, targets) -> str | None:
        """The acquisition under which this client holds every one of `targets` for `owner` (a
        nested acquire names it again, so the server answers with the same grant), else None."""
        with self._mutex:
            ids = {self._acquisitions.get((owner, t.key, t.scope)) for t in targets}
            held = all(self._counts.get((owner, t.key, t.scope)) for t in targets)
            return ids.pop() if held and len(ids) == 1 else None

    def enter(self, owner: str, grants, reentrant: bool, acquisition: str | None = None) -> bool:
        """Counts `owner`'s `grants` of `acquisition`; returns whether they are nested in a hold of
        this client."""
        with self._mutex:
            nested = reentrant and all(self._counts.get((owner, g.key, g.scope)) for g in grants)
            for g in grants:
                self._counts[(owner, g.key, g.scope)] = self._counts.get((owner, g.key, g.scope), 0) + 1
                self._acquisitions[(owner, g.key, g.scope)] = acquisition
            return nested

    def leave(self, owner: str, grants) -> None:
        with self._mutex:
            for g in grants:
                left = self._counts.get((owner, g.key, g.scope), 1) - 1
                if left > 0:
                    self._counts[(owner, g.key, g.scope)] = left
                else:
                    self._counts.pop((owner, g.key, g.scope), None)
                    self._acquisitions.pop((owner, g.key, g.scope), None)


class Losable:
    """Something held that can be lost while its block runs (a lock, a session): `lost` turns
    true once, `lost_error` is then the `LockLost` the block ends with, and `on_lost(self)` is
    called."""

    lost = False
    lost_error: LockLost | None = None
    _closing = False  # release (or end) begun: a renewal's answer no longer means anything

    def watching(self) -> bool:
        """Whether its watchdog (or keep-alive) should go on."""
        return not self.lost and not self._closing

    def _mark_lost(self, error: LockLost, cause: BaseException | None) -> bool:
        """Marks it lost unless it already is or was let go; returns whether this call did."""
        with self._mutex:
            if self.lost or self._let_go():
                return False
            self.lost, self.lost_error = True, error
            error.__cause__ = cause
        log.warning("%s", error)
        return True

    def _let_go(self) -> bool:
        """Whether it was released (or ended) on purpose: nothing can be lost after that."""
        raise NotImplementedError

    def _call_back(self, on_lost) -> None:
        if on_lost is not None:
            try:
                self._notify(on_lost(self))
            except Exception:  # a failing callback must not stop the watchdog or the release
                log.exception("on_lost callback of %r failed", self)

    def _notify(self, result: Any) -> None:
        """What to do with the callback's result (the asyncio variants run a coroutine)."""

    def exit_error(self, exc: BaseException | None, close_error: BaseException | None):
        """What leaving the block raises: the loss (its context is the block's own error); else
        a failed release or end when the block itself succeeded; else nothing."""
        if exc is not None and not isinstance(exc, Exception):
            return None  # KeyboardInterrupt, SystemExit, a cancellation not ours: let them through
        if self.lost:
            return self.lost_error
        return close_error if exc is None else None

    def raise_if_lost(self, close_error: BaseException | None) -> None:
        """After a release or end called by hand: the loss, else its failure, else nothing."""
        error = self.lost_error if self.lost else close_error
        if error is not None:
            raise error


class HandleBase(Losable):
    """A held lock (or the locks of one multi-lock). `lost` turns true, once, when the lock is
    known to be gone; `lost_error` is then the `LockLost` the block ends with. `revoke_grace_s`
    is set when a preempting waiter asked it to yield (with `on_revoke`, docs/API.md
    "Preemption")."""

    revoke_grace_s: float | None = None

    def __init__(self, client, options: LockOptions, answer: dict, started: float):
        self.client = client
        self.owner: str = options.owner  # chosen by `ClientBase.owner_for` before the acquire
        self.acquisition: str | None = options.acquisition  # and `ClientBase.acquisition_for`
        self.options = options
        self.permits: int | None = answer.get("permits")  # a semaphore's grant only
        # A semaphore's grant only: the permits of its limit nobody held just after this grant.
        self.remaining: int | None = answer.get("remaining")
        self.grants = Grant.all_of(options, answer)
        self.lease_ms: int = answer["lease_ms"]
        self.waited_ms: int = answer.get("waited_ms", 0)
        self.session = options.session
        self.nested = client.holds.enter(self.owner, self.grants, bool(answer.get("reentrant")),
                                         self.acquisition)
        self.released = False
        # The server granted no earlier than the request was sent plus the time it queued there:
        # the lease is counted from that point on this client's clock, never from the answer.
        self._granted_at = started + self.waited_ms / 1000
        self._lease_end = self._granted_at + self.lease_ms / 1000
        self.handed_over = False  # to the caller: only then is a loss signalled
        self._mutex = threading.Lock()
        if self.session is not None:
            self.session.adopt(self)

    def __repr__(self) -> str:
        state = "lost" if self.lost else "released" if self.released else "held"
        return f"<{type(self).__name__} {list(self.tokens)} owner={self.owner!r} {state}>"

    @property
    def key(self) -> str:
        return self.grants[0].key

    @property
    def keys(self) -> list[str]:
        return [g.key for g in self.grants]

    @property
    def mode(self) -> str:
        """`exclusive` or `shared` (`shared` once downgraded); empty for a semaphore's permits."""
        return self.grants[0].mode

    @property
    def fencing_token(self) -> int:
        """The grant's fencing token (for a multi-lock, the largest of its tokens): write it as
        the external version of what the lock protects (docs/API.md "The fencing recipe")."""
        return max(g.fencing_token for g in self.grants)

    @property
    def tokens(self) -> dict[str, int]:
        return {g.key: g.fencing_token for g in self.grants}

    def fence_of(self, key: str | None) -> fenced.Fence:
        """The key and token that fence a write or change: refused at once when the lock is known
        lost; `key` names one of a multi-lock's keys (each has its own token)."""
        self.check_held()
        if key is None and len(self.grants) > 1:
            raise InvalidArgument(f"[key] is required for a fenced write or change of a multi-lock: "
                                  f"one of {self.keys}")
        if key is not None and key not in self.tokens:
            raise InvalidArgument(f"[key] must be one of this lock's keys {self.keys}, got [{key}]")
        grant = self.grants[0] if key is None else next(g for g in self.grants if g.key == key)
        return fenced.Fence(grant.key, grant.fencing_token)

    def check_held(self) -> None:
        """Raises the lock's `LockLost` if it is known lost: nothing is sent under a lost lock."""
        error = self.lost_error
        if self.lost and error is not None:
            raise error

    def fenced_index_steps(self, index: str, document: dict, doc_id: str, key: str | None,
                           refresh: Any) -> steps.Steps:
        """`index`'s steps: a fenced write with the token of `key` (see `fence_of`)."""
        return documents.fenced_index(index, doc_id, document, self.fence_of(key).token, refresh)

    def update_steps(self, index: str, doc_id: str, change: Any, key: str | None, refresh: Any) -> steps.Steps:
        """`update`'s steps (eslm/fenced.py): checked, and refused when lost, before anything is sent."""
        return fenced.apply(index, doc_id, self.fence_of(key), change, refresh, self.check_held)

    def read_steps(self, index: str, doc_id: str, key: str | None) -> steps.Steps:
        """`read`'s steps: the fenced read."""
        return fenced.read(index, doc_id, self.fence_of(key))

    def delete_steps(self, index: str, doc_id: str, key: str | None, refresh: Any) -> steps.Steps:
        """`delete`'s steps: the fenced delete."""
        return fenced.delete(index, doc_id, self.fence_of(key), refresh)

    def bulk_steps(self, changes: Iterable[Any], key: str | None, refresh: Any) -> steps.Steps:
        """`bulk`'s steps: one `_bulk` of fenced changes."""
        return fenced.bulk(changes, self.fence_of(key), refresh)

    @property
    def watched(self) -> bool:
        """Whether a watchdog renews it: not under a session (the session's keep-alive does),
        not nested in a block of this client that already holds it, and not acquired with
        `watchdog=False`."""
        return self.session is None and not self.nested and self.options.watchdog

    def renew_interval(self) -> float:
        return self.lease_ms / 1000 * self.client.renew_fraction

    def lose(self, reason: str, cause: BaseException | None = None) -> None:
        """Marks the lock lost (once) and calls `on_lost(held)`."""
        error = LockLost(f"lock {self.keys} of [{self.owner}] was lost: {reason}", self)
        if self._mark_lost(error, cause):
            self._lost_now()
            self._call_back(self.options.on_lost)

    def _lost_now(self) -> None:
        """Runs once at the loss, before `on_lost`: a leadership stops its work here."""

    def _let_go(self) -> bool:
        return self.released

    # --- operations (eslm/steps.py) -----------------------------------------------------------

    def renew_steps(self, lease=None):
        """Renews every grant for `lease` (default: the lease it was acquired with); 503s are
        retried until the lease would have run out. A grant found gone is a loss (and raises
        LockNotHeld)."""
        lease_ms = self.options.lease_ms if lease is None else to_millis(lease, "lease")
        for g in self.grants:
            started = time.monotonic()
            body = keyed_body(self.owner, g.fencing_token, g.scope, self.acquisition)
            if lease_ms is not None:
                body["lease"] = lease_ms
            call = steps.Call("POST", path_of(g.key, "/_renew", g.scope), body)
            try:
                answer = yield from steps.retrying(lambda _d: call, self._lease_end)
            except LockNotHeld as e:
                if not self._closing and self.handed_over:
                    self.lose("a renewal found it no longer held (expired or force-released)", e)
                raise
            self.lease_ms = answer["lease_ms"]
            self._lease_end = started + self.lease_ms / 1000

    def downgrade_steps(self):
        """Weakens the grant from exclusive to shared in one step (`POST /_locks/{key}/_downgrade`,
        docs/API.md): the lock stays held throughout, so no waiting writer gets in, while queued
        readers are granted at once; the token and the lease stay. 503s are retried within the
        lease. A lock found gone is lost (`LockLost`)."""
        self.check_held()
        g = self.grants[0]
        if self.options.multi or g.scope not in ("key", "tree"):
            raise InvalidArgument(f"only a lock of one key is downgraded, not {self!r}")
        if g.mode != "exclusive":
            raise InvalidArgument(f"lock [{g.key}] is {g.mode}: only an exclusive lock is downgraded")
        if self.nested:
            raise InvalidArgument(f"lock [{g.key}] is held by an outer block of this owner: downgrade that one")
        if self.released:
            raise LockNotHeld(f"lock [{g.key}] was released: nothing to downgrade")
        body = {**keyed_body(self.owner, g.fencing_token, g.scope, self.acquisition), "mode": "shared"}
        call = steps.Call("POST", path_of(g.key, "/_downgrade", g.scope), body)
        try:
            answer = yield from steps.retrying(lambda _d: call, self._lease_end)
        except LockNotHeld as e:
            self.lose("the downgrade found it no longer held (expired or force-released)", e)
            self.check_held()
            raise
        self.grants = (dataclasses.replace(g, mode=answer.get("mode", "shared")),)

    def arrival_steps(self):
        """Before the grant is handed over: when its answer arrived so late that the watchdog's
        first renewal is already due (the lease counted from the request's sending plus the
        server's `waited_ms`; a stalled node or a slow network), it is renewed first. A renewal
        that finds it gone, or that fails once the lease could have ended, means not acquired
        (`GrantExpired`): a lock is never handed over as held after its lease could have run
        out, since the key may be another owner's by then."""
        if self.watched and time.monotonic() >= self._granted_at + self.renew_interval():
            log.warning("grant of %r arrived %.0f ms after it was made; renewing before handing it over",
                        self, (time.monotonic() - self._granted_at) * 1000)
            try:
                yield from self.renew_steps()
            except LockError as e:
                if isinstance(e, LockNotHeld) or time.monotonic() >= self._lease_end:
                    yield from self._give_up_late(e)
                log.warning("renewal of late grant %r failed within its lease; the watchdog retries: %s", self, e)
        self.handed_over = True

    def _give_up_late(self, cause: LockError):
        """Not acquired after all: released if the server may still hold it, then counted out."""
        if not isinstance(cause, LockNotHeld):
            try:
                yield from self.release_steps()
            except LockError as e:
                log.info("release of late grant %r failed (its lease ends it): %s", self, e)
        self._closing = True
        self.mark_released()
        raise GrantExpired(f"grant of {self.keys} for [{self.owner}] arrived after its lease could have "
                           f"ended and was not renewed in time: not acquired ({cause})") from cause

    def owned_steps(self):
        """Whether the server still has this grant (`GET` of the key: this owner, this token)."""
        states = yield from self._grant_states()
        return all(self._holds(g, state) for g, state in states)

    def locked_steps(self):
        """Whether anyone holds any of its keys now (this owner or another)."""
        states = yield from self._grant_states()
        return any(state.get("leader") is not None if g.scope == ELECTION else bool(holders_of(state))
                   for g, state in states)

    def _grant_states(self):
        """Each grant with its key's state now: the client's `get` (a lock or a semaphore), or
        the election's state for a leadership."""
        states = []
        for g in self.grants:
            if g.scope == ELECTION:
                state = yield from steps.simple("GET", path_of(g.key, "", ELECTION), None,
                                                self.client.retry_for_ms / 1000)
            else:
                state = yield from self.client.get_steps(g.key, g.scope)
            states.append((g, state))
        return states

    def _holds(self, g: Grant, state: dict) -> bool:
        """Whether `state` shows grant `g` held by this owner with its token."""
        if g.scope == ELECTION:
            return (state.get("leader"), state.get("term")) == (self.owner, g.fencing_token)
        return any(h.get("owner") == self.owner and h.get("fencing_token") == g.fencing_token
                   for h in state.get("holders", []))

    def watch_steps(self):
        """One watchdog round: a renewal; a loss when the server says the lock is gone, or when
        renewals kept failing until the lease ran out."""
        try:
            yield from self.renew_steps()
        except LockNotHeld:
            pass  # lost (renew_steps said so)
        except LockError as e:
            if time.monotonic() >= self._lease_end and not self._closing:
                self.lose(f"renewals failed until its lease ran out ({e})", e)
            else:
                log.warning("renewal of %r failed, retrying within its lease: %s", self, e)

    @property
    def loss_watched(self) -> bool:
        """Whether a watch signals its loss at once: as `watched` (a session's locks are the
        session's to lose, and the outer block's handle watches), and the client watches at
        all (`loss_watches`)."""
        return self.watched and self.client.loss_watches > 0

    def watch_wait_ms(self) -> int:
        """How long one watch waits: a renewal interval (at least a second), so each poll is
        well within the server's `locks.wait.max` for any lease a renewal keeps."""
        return max(1000, int(self.renew_interval() * 1000))

    def loss_watch_steps(self, g: Grant):
        """Watches grant `g` until the lock is let go or lost: one long poll after another; an
        answer that its token ended is a loss, with the server's reason. A failed poll is
        retried after a second (renewals still find a loss); a refused one (400) stops. With
        `on_revoke`, the first poll also answers a request to yield (docs/API.md "Preemption"):
        the callback is called once, and the watch goes on for the end."""
        notices = self.options.on_revoke is not None and g.scope != ELECTION
        while self.watching():
            try:
                answer = yield from steps.watch(g.key, g.fencing_token, self.watch_wait_ms(), g.scope, notices)
            except BadRequest as e:
                log.warning("watching %r refused, renewals alone will find a loss: %s", self, e)
                return
            except LockError as e:
                log.info("watch of %r failed, retrying: %s", self, e)
                yield steps.Sleep(1.0)
                continue
            if answer.get("reason") == "revoke_requested":
                notices = False
                self.revoke_requested(answer.get("grace_ms", 0) / 1000)
                continue
            if answer.get("changed") and self.watching():
                # an election's observe has no reason: its term is simply no longer the leader's
                reason = answer.get("reason") or f"its term ended; leader now {answer.get('leader')!r}"
                self.lose(f"the server ended it ({reason})")

    def revoke_requested(self, grace_s: float) -> None:
        """A preempting waiter asked this holder to yield within `grace_s` seconds: calls
        `on_revoke(held, grace_s)` (the watchdog goes on renewing until a release, or until the
        lock is taken away and lost)."""
        self.revoke_grace_s = grace_s
        try:
            self._notify(self.options.on_revoke(self, grace_s))
        except Exception:  # a failing callback must not stop the watch
            log.exception("on_revoke callback of %r failed", self)

    def release_steps(self):
        """Releases the grant(s), 503s retried for the client's `retry_for`. A release that
        finds the lock not held is a loss. A nested block releases nothing."""
        self._closing = True
        if self.nested or self.released:
            return
        budget_s = self.client.retry_for_ms / 1000
        try:
            if self.options.multi:
                entries = [{"key": g.key, "scope": g.scope, "fencing_token": g.fencing_token}
                           for g in self.grants]
                body = {"owner": self.owner, "locks": entries, "acquisition": self.acquisition}
                answer = yield from steps.simple("POST", "/_locks/_release", body, budget_s)
                gone = set(self.keys) - {r["key"] for r in answer.get("released", [])}
                if gone:
                    self.lose(f"the release found {sorted(gone)} not held")
            else:
                g = self.grants[0]
                body = keyed_body(self.owner, g.fencing_token, g.scope, self.acquisition)
                yield from steps.simple("POST", path_of(g.key, "/_release", g.scope), body, budget_s)
        except LockNotHeld as e:
            self.lose("the release found it not held (expired or force-released)", e)
        self.mark_released()

    def mark_released(self) -> None:
        """Released (by its release, or with its session): counted out of this client."""
        with self._mutex:
            if self.released:
                return
            self.released = True
        self.client.holds.leave(self.owner, self.grants)
        self.client.let_go(self)
        if self.session is not None:
            self.session.handles.discard(self)


class HeldLock(HandleBase):
    """A held lock (sync). As a context manager it is released when the block ends, with a
    watchdog thread renewing it meanwhile; see `Locks.lock`."""

    def __init__(self, client, options, answer, started):
        super().__init__(client, options, answer, started)

    def start_watchdog(self) -> None:
        """Starts its renewals and its loss watch (not for a nested or session lock)."""
        if self.watched:
            self.client.renewer.watch(self)
        if self.loss_watched:
            self.client.loss_watcher.watch(self)

    def renew(self, lease=None) -> None:
        """Renews now (the watchdog does it by itself). Raises LockNotHeld if it is gone."""
        self.client.run(self.renew_steps(lease))

    def downgrade(self) -> None:
        """Turns this exclusive lock (a `write_lock`) into a shared one (a read lock) without
        letting go (docs/API.md "POST /_locks/{key}/_downgrade"): readers queued for the key are
        let in at once, a queued writer goes on waiting; `fencing_token` and the lease stay the
        same, and the watchdog goes on renewing. Raises `LockLost` when the lock is gone,
        `InvalidArgument` for a lock that is not exclusive, a multi-lock, a semaphore or an
        election, or a nested block's handle (downgrade the outer block's)."""
        self.client.run(self.downgrade_steps())

    def extend(self, lease) -> None:
        """Renews now for `lease`, counted from now (redis-py's `extend(t, replace_ttl=True)`:
        the server replaces the lease, it never adds to it); the watchdog keeps that lease.
        Raises LockNotHeld (and the lock is lost) if it is gone."""
        self.client.run(self.renew_steps(lease))
        self.options = dataclasses.replace(self.options, lease_ms=self.lease_ms)

    def owned(self) -> bool:
        """Whether the server still has this grant: this owner with this fencing token (redis-py's
        `owned()`); False once released, expired, force-released or lost."""
        return self.client.run(self.owned_steps())

    def index(self, index: str, document: dict, *, id: str, key: str | None = None,
              refresh: Any = None) -> dict:
        """Writes `document` as `index/_doc/id` fenced by this lock's token (docs/API.md "Fenced
        writes and optimistic updates"): Elasticsearch refuses it with `StaleToken` once a later
        holder of the lock has written the document. `key` picks a multi-lock's token. Raises
        `LockLost` without writing when the lock is already known lost. Returns Elasticsearch's
        answer (`_version` is the token)."""
        return self.client.run(self.fenced_index_steps(index, document, id, key, refresh))

    def update(self, index: str, id: str, change: Any, *, key: str | None = None,
               refresh: Any = None) -> dict | None:
        """Changes `index/_doc/id` fenced by this lock's token (docs/API.md "Fenced changes"):
        Elasticsearch applies the change only if no later holder of the lock has changed the
        document, in the same operation, on its primary. `change` is a partial document (a dict,
        merged), a list of field operations (`eslm.ops.inc`, `append`, `set`, `remove`: run on the
        document as it stands, no read needed), or a function of the document's source (None when
        there is none) returning the new whole document, or None to write nothing: a fenced read,
        then the result written with the same token. A missing document is created.

        Returns the document as it now stands (without its fence; None for a tombstone). Raises
        `StaleToken` when a later holder has changed the document (nothing written), `LockLost`
        without sending anything when the lock is already known lost, `InvalidArgument` for a
        change it cannot send, `IllegalArgument` for one the document refuses (an `inc` of text).
        `key` picks a multi-lock's key; `refresh` is Elasticsearch's."""
        return self.client.run(self.update_steps(index, id, change, key, refresh))

    def read(self, index: str, id: str, *, key: str | None = None) -> dict | None:
        """The fenced read of `index/_doc/id`: raises the document's fence to this lock's token
        (from then on an older holder's change is refused) and returns its source, without the
        fence (None when missing or a tombstone: a missing document becomes a tombstone). Raises
        `StaleToken` when a later holder has changed it, `LockLost` as `update` does."""
        return self.client.run(self.read_steps(index, id, key))

    def delete(self, index: str, id: str, *, key: str | None = None, refresh: Any = None) -> None:
        """The fenced delete of `index/_doc/id`: it becomes a tombstone that keeps the fence, so a
        stale holder's later change is still refused (a plain delete's is forgotten after
        `index.gc_deletes`). Raises as `update` does."""
        self.client.run(self.delete_steps(index, id, key, refresh))

    def bulk(self, changes: Iterable[Any], *, key: str | None = None,
             refresh: Any = None) -> list[fenced.FencedResult]:
        """Many fenced changes in one `_bulk`, each fenced on its own by this lock's token:
        `changes` are `(index, id, change)` with `change` a partial document, a list of field
        operations, or `eslm.ops.DELETE` (no functions: use `update` for a read-modify-write).
        Returns one `eslm.FencedResult` per change, in order: `applied`, `stale` or `failed`,
        with the document as it now stands or the error. Never raises for an item; raises
        `InvalidArgument` (nothing sent) for a change it cannot send, `LockLost` as `update`
        does, and the error of the request as a whole."""
        return self.client.run(self.bulk_steps(changes, key, refresh))

    def locked(self) -> bool:
        """Whether anyone holds the key now, this grant or another (redis-py's `locked()`)."""
        return self.client.run(self.locked_steps())

    def release(self) -> None:
        """Releases the lock; raises `LockLost` if it turned out lost (now or before)."""
        self.raise_if_lost(self._close())

    def _close(self) -> BaseException | None:
        return self.client.attempt(self.release_steps())  # which stops the watchdog first

    def __enter__(self) -> "HeldLock":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        error = self.exit_error(exc, self._close())
        if error is not None:
            raise error
        return False


class Renewer:
    """The watchdog of a sync client: one thread schedules the rounds (a renewal of a held lock,
    a keep-alive of a session) of everything the client holds, and a small pool runs them, so a
    slow round never delays another's and taking a lock starts no thread (bench/RESULTS.md,
    "Python client overhead"). A target leaves the schedule when it stops `watching()`."""

    def __init__(self, client, workers: int = 4):
        self._client = client
        self._workers = workers
        self._due: list = []  # heap of (when, sequence, target)
        self._sequence = itertools.count()
        self._changed = threading.Condition()
        self._pool: ThreadPoolExecutor | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def watch(self, target) -> None:
        """Schedules `target`'s next round, `target.renew_interval()` from now."""
        when = time.monotonic() + target.renew_interval()
        with self._changed:
            if self._closed:
                return
            sooner = not self._due or when < self._due[0][0]
            heapq.heappush(self._due, (when, next(self._sequence), target))
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="eslm-renew")
                self._thread = threading.Thread(target=self._schedule, name="eslm-watchdog", daemon=True)
                self._thread.start()
            elif sooner:
                self._changed.notify()

    def close(self) -> None:
        """Stops scheduling, lets the rounds under way finish, and ends its threads."""
        with self._changed:
            self._closed = True
            self._due.clear()
            self._changed.notify()
        if self._thread is not None:
            self._thread.join()
            self._pool.shutdown(wait=True)

    def _schedule(self) -> None:
        with self._changed:
            while not self._closed:
                delay = self._due[0][0] - time.monotonic() if self._due else None
                if delay is None or delay > 0:
                    self._changed.wait(delay)
                    continue
                target = heapq.heappop(self._due)[2]
                if target.watching():
                    self._pool.submit(self._round, target)

    def _round(self, target) -> None:
        self._client.attempt(target.watch_steps())
        if target.watching():
            self.watch(target)


class LossWatcher:
    """The loss watches of a sync client: each held lock's grants are long-polled
    (`HandleBase.loss_watch_steps`) by `loss_watches` daemon threads, started on first use (a
    watch lasts as long as its lock, so a process may exit while one runs). They are apart from
    the renewals' pool so a long poll never delays a renewal; locks beyond their number wait
    their turn (renewals still find their loss)."""

    def __init__(self, client):
        self._client = client
        self._queue: queue.SimpleQueue | None = None
        self._threads: list[threading.Thread] = []
        self._mutex = threading.Lock()

    def watch(self, held: "HeldLock") -> None:
        with self._mutex:
            if self._queue is None:
                self._queue = queue.SimpleQueue()
                for n in range(self._client.loss_watches):
                    thread = threading.Thread(target=self._work, name=f"eslm-watch-{n}", daemon=True)
                    thread.start()
                    self._threads.append(thread)
        for g in held.grants:
            self._queue.put((held, g))

    def close(self, timeout: float) -> None:
        """Ends its threads once the watches under way end (a released lock's watch is answered
        at once; one whose release failed ends within its poll's wait), at most `timeout` s."""
        with self._mutex:
            threads, self._threads = self._threads, []
            for _ in threads:
                self._queue.put(None)
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            held, g = item
            self._client.attempt(held.loss_watch_steps(g))
