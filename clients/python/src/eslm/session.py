"""Sessions (docs/API.md "Sessions"): many locks under one lease with one keep-alive. The
session is created on entry, kept alive in the background at a fraction of its ttl, and ended
at exit, which releases its locks. A session found gone (expired, or keep-alives failing for
its whole ttl) is lost like a lock: `lost`, `on_lost(session)`, every lock taken under it lost
too, and the block ends with `SessionLost`."""

from __future__ import annotations

import logging
import threading
import time


from . import steps
from .durations import optional_millis
from .errors import InvalidArgument, LockError, SessionLost, SessionNotFound
from .held import Losable
from .lock_api import LockApi
from .options import check_name

log = logging.getLogger("eslm")


class SessionBase(Losable):
    """What the sync `Session` and the asyncio `AsyncSession` share: its requests and the
    decisions about its loss."""

    def __init__(self, client, ttl, routing: str | None, on_lost):
        if on_lost is not None and not callable(on_lost):
            raise InvalidArgument(f"[on_lost] must be callable, got [{on_lost!r}]")
        self.client = client
        # The owner of the session's locks: one of its own (or the client's explicit owner).
        self.owner = client.owner or client.fresh_owner()
        self.ttl_asked_ms = optional_millis(ttl, "ttl")
        self.routing = None if routing is None else check_name(routing, "routing")
        self.on_lost = on_lost
        self.id: str | None = None
        self.ttl_ms: int | None = None
        self.ended = False
        self.handles: set = set()
        self._expires = 0.0
        self._mutex = threading.Lock()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} owner={self.owner!r}>"

    @property
    def _client(self):
        return self.client

    @property
    def _session(self):
        return self

    def renew_interval(self) -> float:
        return self.ttl_ms / 1000 * self.client.renew_fraction

    def adopt(self, held) -> None:
        """A lock taken under this session: lost with it."""
        with self._mutex:
            self.handles.add(held)
            lost = self.lost
        if lost:
            held.lose("its session was lost", self.lost_error)

    def create_steps(self):
        body: dict = {"owner": self.owner}
        optional = {"ttl": self.ttl_asked_ms, "routing": self.routing}
        body.update({k: v for k, v in optional.items() if v is not None})
        started = time.monotonic()
        answer = yield from steps.simple("POST", "/_locks/_session", body, self.client.retry_for_ms / 1000)
        self.id, self.ttl_ms = answer["session"], answer["ttl_ms"]
        self._expires = started + self.ttl_ms / 1000
        self.client.live.add(self)

    def watch_steps(self):
        """One keep-alive; a loss when the server no longer knows the session, or when
        keep-alives kept failing until its ttl ran out."""
        started = time.monotonic()
        call = steps.Call("POST", f"/_locks/_session/{self.id}/_keepalive", {"owner": self.owner})
        try:
            answer = yield from steps.retrying(lambda _d: call, self._expires)
            self._expires = started + answer["ttl_ms"] / 1000
        except SessionNotFound as e:
            self.lose("a keep-alive found it gone (expired or ended)", e)
        except LockError as e:
            if time.monotonic() >= self._expires:
                self.lose(f"keep-alives failed until its ttl ran out ({e})", e)
            else:
                log.warning("keep-alive of %r failed, retrying within its ttl: %s", self, e)

    def end_steps(self):
        """Ends the session (its locks are released); finding it gone is a loss."""
        if self.ended or self.id is None:
            return
        try:
            yield from steps.simple("DELETE", f"/_locks/_session/{self.id}", {"owner": self.owner},
                                    self.client.retry_for_ms / 1000)
        except SessionNotFound as e:
            self.lose("ending it found it gone (expired)", e)
        self.ended = True
        self.client.let_go(self)
        for held in list(self.handles):
            held.mark_released()  # with the session, on the server

    def lose(self, reason: str, cause: BaseException | None = None) -> None:
        """Marks the session lost (once), calls `on_lost(session)`, and loses its locks."""
        error = SessionLost(f"session {self.id} of [{self.owner}] was lost: {reason}", self)
        if self._mark_lost(error, cause):
            self._call_back(self.on_lost)
            with self._mutex:
                handles = list(self.handles)
            for held in handles:
                held.lose("its session was lost", error)

    def _let_go(self) -> bool:
        return self.ended


class Session(SessionBase, LockApi):
    """A session of a sync `Locks` (see `Locks.session`); `s.lock(...)`, `s.try_lock(...)`,
    `s.acquire(...)` and `s.lock_many(...)` take locks under it."""

    def __enter__(self) -> "Session":
        self.client.check_open()
        self.client.run(self.create_steps())
        self.client.renewer.watch(self)
        return self

    def end(self) -> None:
        """Ends the session now; raises `SessionLost` if it was lost."""
        self.raise_if_lost(self._close())

    def _close(self) -> BaseException | None:
        self._closing = True  # its keep-alive stops
        return self.client.attempt(self.end_steps())

    def __exit__(self, exc_type, exc, tb) -> bool:
        error = self.exit_error(exc, self._close())
        if error is not None:
            raise error
        return False
