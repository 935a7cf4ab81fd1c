"""The sync client: `Locks`, over the user's own `elasticsearch.Elasticsearch` object, so its
auth, TLS, node pool and retries are the ones every lock call uses."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import logging
import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any, Callable

from . import documents, steps
from .cancel import Cancel
from .durations import Duration, to_millis
from .errors import InvalidArgument, LockConflict, Unavailable
from .election import LeaderLoop, Leadership, election_steps, observe_steps
from .groups import GroupApi
from .held import HeldLock, Holds, LossWatcher, Renewer, holders_of
from .lock_api import LockApi
from .options import MAX_SEMAPHORE_LIMIT, SEMAPHORE, LockOptions, Target, check_count, check_name, path_of
from .session import Session

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import LoopArgs

log = logging.getLogger("eslm")


def client_identity() -> str:
    """Unique per process and per client: host, pid and 48 random bits."""
    return f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:12]}"


class ClientBase:
    """Settings and bookkeeping shared by `Locks` and `AsyncLocks` (eslm/aio.py).

    Owners (docs/API.md "Conventions": a second acquire by the holding owner is a reentrant
    grant). By default every acquisition gets an owner of its own (`<identity>/<n>`, the
    identity host/pid/random per client), so threads and tasks sharing one client exclude each
    other, as redis-py's tokens and kazoo's nodes do. Reentrancy is asked for: `owner` here
    (every acquire of this client under that one owner, wherever it runs), `owner=` on one call,
    `with_owner(owner)`, or `reentrant=True` on a call (an owner per thread, or per asyncio
    task). `retry_for` bounds how long calls without a `wait` of their own
    (release, renew by hand, sessions, force-release) retry a 503; an acquire retries within
    its `wait` only. The watchdog renews every `renew_fraction` of the lease. `loss_watches`
    locks at most are watched at once (`GET /_locks/{key}/_watch`), so their loss is signalled
    as soon as the server ends them rather than at the next renewal; each watch holds one
    connection of the client's pool (10 per node by default), so keep it below that; 0 turns
    watching off."""

    def __init__(self, es: Any, owner: str | None = None, *, retry_for: Duration = "10s",
                 renew_fraction: float = 1 / 3, loss_watches: int = 4):
        if not hasattr(es, "perform_request"):
            raise InvalidArgument(f"[es] must be an Elasticsearch client object, got {type(es).__name__}")
        if isinstance(renew_fraction, bool) or not isinstance(renew_fraction, (int, float)) \
                or not 0 < renew_fraction < 1:
            raise InvalidArgument(f"[renew_fraction] must be a number between 0 and 1, got [{renew_fraction!r}]")
        self.es = es
        self.owner: str | None = None if owner is None else check_name(owner, "owner")
        self.identity = client_identity()
        self._acquisitions = itertools.count(1)
        self._thread_owners = threading.local()
        self.retry_for_ms = to_millis(retry_for, "retry_for")
        self.renew_fraction = float(renew_fraction)
        if isinstance(loss_watches, bool) or not isinstance(loss_watches, int) or loss_watches < 0:
            raise InvalidArgument(f"[loss_watches] must be a whole number >= 0, got [{loss_watches!r}]")
        self.loss_watches = loss_watches
        self.holds = Holds()
        self.live: set = set()  # handles and sessions not yet let go, for close()
        self.view_of: ClientBase | None = None
        self.closed = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} owner={self.owner or self.identity + '/*'!r}>"

    def fresh_owner(self) -> str:
        """An owner nobody else uses: the client's owner (or identity) and a sequence number."""
        return f"{self.owner or self.identity}/{next(self._acquisitions)}"

    def scoped_owner(self) -> str:
        """The calling thread's owner for `reentrant=True` (`AsyncLocks`: the task's)."""
        owner = getattr(self._thread_owners, "owner", None)
        if owner is None:
            owner = self._thread_owners.owner = f"{self.fresh_owner()}-thread"
        return owner

    def owner_for(self, options: LockOptions) -> str:
        """Who the acquire of `options` is made by, chosen once before it is sent (its retries
        keep it, so a retry of an unseen grant is answered with that grant): the call's owner,
        the session's, `reentrant`'s thread or task owner, the client's own, else a fresh one."""
        if options.owner is not None:
            return options.owner
        if options.session is not None:
            return options.session.owner
        if options.reentrant:
            return self.scoped_owner()
        return self.owner or self.fresh_owner()

    def acquisition_for(self, options: LockOptions) -> str:
        """The acquisition an acquire of `options` (whose owner is chosen) is: the one under which
        this client already holds every target for that owner (a nested block: the server
        answers with the same grant), else a new one. A new acquisition of a lock the owner holds
        elsewhere (another process under a shared owner) replaces that grant under a newer token
        (docs/API.md "Acquisitions")."""
        held = self.holds.acquisition_of(options.owner, options.targets)
        return held if held is not None else uuid.uuid4().hex

    def with_owner(self, owner: str):
        """A view of this client whose acquires are all made by `owner` (reentrant wherever it
        is used: several threads under one owner share its grants). It shares the connection,
        the watchdog and its threads; closing a view does nothing, close the client itself."""
        view = copy.copy(self)
        view.owner = check_name(owner, "owner")
        view.view_of = self.view_of or self
        return view

    def let_go(self, held) -> None:
        """`held` (a handle or session) was released or ended: close() need not."""
        self.live.discard(held)

    def check_open(self) -> None:
        if (self.view_of or self).closed:
            raise InvalidArgument(f"{self!r} is closed")

    def force_release_steps(self, key: str, scope: str, reason: str | None):
        body = {"scope": Target.checked(key, scope=scope).scope}
        if reason is not None:
            body["reason"] = str(reason)
        return steps.simple("POST", path_of(key, "/_force_release"), body, self.retry_for_ms / 1000)

    def semaphore_limit_steps(self, name: str, limit: int):
        body = {"limit": check_count(limit, "limit", MAX_SEMAPHORE_LIMIT)}
        return steps.simple("POST", path_of(check_name(name, "name"), "/_limit", SEMAPHORE), body,
                            self.retry_for_ms / 1000)

    def watch_steps(self, key: str, token: int, wait: Duration, scope: str):
        Target.checked(key, scope=scope)
        if isinstance(token, bool) or not isinstance(token, int) or token <= 0:
            raise InvalidArgument(f"[token] must be a fencing token (a positive whole number), got [{token!r}]")
        return steps.watch(key, token, to_millis(wait, "wait"), scope)

    def get_steps(self, key: str, scope: str):
        if scope == SEMAPHORE:
            path = path_of(check_name(key, "name"), "", SEMAPHORE)
        else:
            path = path_of(Target.checked(key, scope=scope).key, f"?scope={scope}")
        return steps.simple("GET", path, None, self.retry_for_ms / 1000)


class Locks(ClientBase, LockApi, GroupApi):
    """Locks over a sync `Elasticsearch` client: `locks = Locks(es)`, then
    `with locks.lock("orders-42", lease="30s") as held: ... held.fencing_token ...`."""

    def __init__(self, es: Any, owner: str | None = None, *, retry_for: Duration = "10s",
                 renew_fraction: float = 1 / 3, loss_watches: int = 4):
        super().__init__(es, owner, retry_for=retry_for, renew_fraction=renew_fraction,
                         loss_watches=loss_watches)
        self.renewer = Renewer(self)
        self.loss_watcher = LossWatcher(self)

    def __enter__(self) -> "Locks":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    def close(self) -> None:
        """Releases every lock and ends every session this client still holds (errors logged:
        a lock whose release fails ends with its lease), then stops every thread it started.
        Afterwards acquires raise `InvalidArgument`. On a `with_owner` view it does nothing."""
        if self.view_of is not None or self.closed:
            return
        self.closed = True
        for held in list(self.live):
            error = held._close()
            if error is not None:
                log.warning("closing %r: %r not let go cleanly: %s", self, held, error)
        self.renewer.close()
        self.loss_watcher.close(timeout=self.retry_for_ms / 1000)

    @property
    def _client(self) -> "Locks":
        return self

    def run(self, operation: steps.Steps, cancel: Cancel | None = None,
            abandoned: Callable[[Any], None] | None = None) -> Any:
        """Runs one operation of eslm/steps.py with blocking calls. With `cancel`, a call that
        waits on the server (an acquire's) runs in a helper thread, so that `cancel` stops it
        (eslm/cancel.py); an answer that comes after goes to `abandoned`."""
        step = steps.Stepper(operation)
        while not step.done:
            with steps.Outcome() as out:
                out.reply = self._do(step.effect, cancel, abandoned)
            step.settle(out.reply, out.error)
        return step.value

    def attempt(self, operation: steps.Steps) -> BaseException | None:
        """`run`, returning the lock or transport error it raised instead of raising it."""
        with steps.Outcome() as out:
            self.run(operation)
        return out.error

    def _do(self, effect, cancel: Cancel | None = None, abandoned=None) -> Any:
        if isinstance(effect, steps.Sleep):
            return time.sleep(effect.seconds) if cancel is None else cancel.sleep(effect.seconds)
        if cancel is None or effect.timeout is None:
            return effect.send(self.es).body
        return cancel.call(lambda: effect.send(self.es).body, abandoned or (lambda _: None))

    def take(self, options: LockOptions, cancel: Cancel | None = None) -> HeldLock:
        """Acquires what `options` asks for under `owner_for(options)`, hands the grant over only
        if its lease is safely left (`HandleBase.arrival_steps`), and starts its watchdog.
        `cancel` stops a waiting acquire from another thread (`AcquireCancelled`)."""
        self.check_open()
        options = dataclasses.replace(options, owner=self.owner_for(options))
        options = dataclasses.replace(options, acquisition=self.acquisition_for(options))
        started = time.monotonic()
        handle = Leadership if options.election else HeldLock

        def release_late_grant(answer: dict) -> None:
            error = handle(self, options, answer, started)._close()
            if error is not None:
                log.warning("a grant that came after its acquire was cancelled was not released: %s", error)

        held = handle(self, options, self._acquire(options, cancel, release_late_grant), started)
        self.run(held.arrival_steps())
        self.live.add(held)
        held.start_watchdog()
        return held

    def _acquire(self, options: LockOptions, cancel: Cancel | None, late: Callable[[Any], None]) -> Any:
        """The grant's answer. A cancellable acquire that may wait tries once in this thread
        first (`wait` 0): an uncontended grant costs no helper thread, and only a busy key
        waits in one (eslm/cancel.py). Not with `preempt`, which asks holders to yield only
        for a waiter."""
        if cancel is not None and options.wait_ms != 0 and options.preempt_ms is None:
            try:
                return self.run(steps.acquire(options.owner, dataclasses.replace(options, wait_ms=0)))
            except (LockConflict, Unavailable):
                pass  # busy, or a 503 the waiting request retries within its wait
        return self.run(steps.acquire(options.owner, options), cancel, late)

    def session(self, ttl: Duration | None = None, routing: str | None = None, on_lost=None):
        """A session (`with locks.session(ttl="30s") as s:`): created on entry, kept alive in
        the background, ended at exit (which releases its locks). Locks taken with
        `s.lock(...)` follow its lease; losing it loses them all (`SessionLost`)."""
        return Session(self, ttl, routing, on_lost)

    def force_release(self, key: str, *, scope: str = "key", reason: str | None = None) -> dict:
        """Admin: evicts every holder of `key` (`POST /_locks/{key}/_force_release`)."""
        return self.run(self.force_release_steps(key, scope, reason))

    def set_semaphore_limit(self, name: str, limit: int) -> dict:
        """Admin: changes the limit of semaphore `name` while it is in use (`POST
        /_semaphores/{name}/_limit`, docs/API.md "Semaphores"): grants follow it at once, nothing
        held is revoked. Returns `{"key", "limit", "previous", "held"}`; `LockNotHeld` when
        nobody holds or waits. Acquirers must name the new limit from then on."""
        return self.run(self.semaphore_limit_steps(name, limit))

    def optimistic_update(self, index: str, id: str, change, *, retries: int = documents.DEFAULT_RETRIES,
                          refresh: Any = None) -> dict | None:
        """Changes document `index/_doc/id` without a lock (docs/API.md "Fenced writes and
        optimistic updates"): `change(source)` gets a copy of its source (None if there is none)
        and returns the new one; it is written only if nobody wrote in between, else read and
        applied again, at most `retries` times more (`UpdateConflict` then). Returning None or
        the source unchanged writes nothing. Returns the source as it now stands."""
        return self.run(documents.optimistic_update(index, id, change, retries, refresh))

    def locked(self, key: str, *, scope: str = "key") -> bool:
        """Whether anyone holds `key` now (`GET /_locks/{key}`; intention locks of a tree do not
        count; `scope="semaphore"`: any permit held)."""
        return bool(holders_of(self.get(key, scope=scope)))

    def get(self, key: str, *, scope: str = "key") -> dict:
        """Holders and waiters of `key` (`GET /_locks/{key}`; with `scope="semaphore"`,
        `GET /_semaphores/{key}`: its limit, holders with permits, waiters)."""
        return self.run(self.get_steps(key, scope))

    def watch(self, key: str, token: int, wait: Duration = "30s", *, scope: str = "key") -> dict:
        """Waits until the lock of `key` with fencing token `token` ends, at most `wait`
        (`GET /_locks/{key}/_watch`): `{"changed": True, "reason": ...}` (released, expired,
        force_released, session_ended, session_expired, upgraded, not_held) or
        `{"changed": False, "held": True}` when the wait ran out."""
        return self.run(self.watch_steps(key, token, wait, scope))

    def election(self, name: str) -> dict:
        """Election `name`'s state (`GET /_elections/{name}`): `leader` (None when there is
        none), `value`, `term` (0: no leader), `lease_ms` left, queued `candidates`."""
        return self.run(election_steps(self, name))

    def observe(self, name: str, term: int = 0, wait: Duration = "30s") -> dict:
        """Waits at most `wait` until election `name`'s term is not `term` (0: no leader known,
        so it waits for the first one): the state with `changed` True, or `changed` False when
        the wait ran out (`GET /_elections/{name}/_observe`)."""
        return self.run(observe_steps(name, term, wait))

    def leader_loop(self, name: str, work, **settings: Unpack[LoopArgs]) -> LeaderLoop:
        """A `LeaderLoop` for election `name` running `work(lead)` while leader: `with
        locks.leader_loop("scheduler", work, round_wait="10s"):` runs it in a thread for the
        block; `.run()` runs it in this thread until another calls `.stop()`. Settings:
        `candidate` (default: one of its own), `value`, `lease`, `round_wait` (how long each
        campaign waits on the server), `on_lost`."""
        return LeaderLoop(self, name, work, **settings)
