"""`lock`, `lock_many`, `acquire`, `semaphore`, `leadership` and `try_lock`: what the sync
`Locks` and a `Session` both offer (client.py, session.py), in a module of its own so that
neither imports the other for it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Protocol

from .durations import Duration
from .errors import InvalidArgument, LockConflict
from .held import HeldLock
from .options import LockOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import AcquireArgs, LockArgs


class Taker(Protocol):
    """What a `LockApi` acquires through: the sync `Locks` (`Locks.take`)."""

    def take(self, options: LockOptions) -> HeldLock: ...


class LockApi:
    """`lock`, `lock_many`, `acquire` and `try_lock`, for a `Locks` and for a `Session` (whose
    locks follow the session's lease). Options (keywords, `options.LockArgs`): `lease`, `wait`
    (durations: "30s", seconds or a timedelta; None: the server's default), `priority` (0..9,
    "background", "foreground"), `mode` ("exclusive", "shared"), `scope` ("key", "tree"),
    `owner` / `reentrant` (see `ClientBase`), `on_lost` (called with the handle if the lock is
    lost while held)."""

    _client: Taker
    _session: Any = None

    def lock(self, key: str, **options: Unpack[LockArgs]) -> "LockBlock":
        """A block that holds `key`: `with locks.lock("k", lease="30s", wait="10s") as held:`.
        Acquired on entry (LockConflict if busy and no `wait`, LockWaitTimeout when the wait
        runs out), renewed by a watchdog while the block runs, released at its end; a lock lost
        meanwhile sets `held.lost`, calls `on_lost` and ends the block with `LockLost`."""
        return LockBlock(self._client, self._options(LockOptions.single, key, options))

    def lock_many(self, locks: Iterable[Any], **options: Unpack[AcquireArgs]) -> "LockBlock":
        """All or nothing (`POST /_locks/_acquire`): `locks` are keys or `{"key", "mode"?,
        "scope"?}` mappings; the options apply to the whole request."""
        return LockBlock(self._client, self._options(LockOptions.many, locks, options))

    def acquire(self, key: str, **options: Unpack[LockArgs]) -> HeldLock:
        """Acquires now; the handle is released by `held.release()` or a `with held:` block."""
        return self._client.take(self._options(LockOptions.single, key, options))

    def semaphore(self, name: str, limit: int, permits: int = 1,
                  **options: Unpack[AcquireArgs]) -> "LockBlock":
        """A block that holds `permits` of semaphore `name` of `limit` (docs/API.md
        "Semaphores"): `with locks.semaphore("api", limit=4, wait="10s") as held:`. Acquired,
        renewed by the watchdog and released as `lock` is, under an owner of its own per
        acquisition as a lock is; `held.permits` are the permits held. Same options as `lock`,
        without `mode`/`scope`."""
        return LockBlock(self._client, self._options(LockOptions.semaphore, name,
                                                     dict(options, limit=limit, permits=permits)))

    def leadership(self, name: str, *, candidate: str | None = None, value: str | None = None,
                   wait: Duration | None = None, lease: Duration | None = None, on_lost=None) -> "LockBlock":
        """A block that leads election `name` (docs/API.md "Elections"): `with
        locks.leadership("scheduler", value="10.0.0.7", wait="30s") as lead:`. Campaigns on
        entry as `candidate` (default: one of its own; under a session, the session's owner),
        waiting up to `wait` to be elected (`LockWaitTimeout` after it, `LockConflict` with no
        wait). `lead.term` fences the leader's writes. Renewed by the watchdog, loss-watched with
        the election's observe, resigned at exit; a lost leadership sets `lead.lost` and
        `lead.stopping`, calls `on_lost` and ends the block with `LockLost`, as a lock's."""
        return LockBlock(self._client, LockOptions.leadership(
            name, candidate=candidate, value=value, wait=wait, lease=lease, session=self._session,
            on_lost=on_lost))

    def try_lock(self, key: str, **options: Unpack[LockArgs]) -> HeldLock | None:
        """`acquire` without waiting: None when the key is busy (or its grant arrived too late
        to be handed over, `GrantExpired`)."""
        try:
            return self.acquire(key, wait=0, **options)
        except LockConflict:
            return None

    def _options(self, factory, what, options: dict) -> LockOptions:
        if options.get("cancel_on_lost"):
            raise InvalidArgument("[cancel_on_lost] is for the asyncio client (AsyncLocks) only")
        return factory(what, session=self._session, **options)


class LockBlock:
    """What `lock()` returns: acquires on `__enter__`, releases on `__exit__`."""

    def __init__(self, client: Taker, options: LockOptions):
        self.client = client
        self.options = options
        self.held: HeldLock | None = None

    def __enter__(self) -> HeldLock:
        self.held = self.client.take(self.options)
        return self.held

    def __exit__(self, exc_type, exc, tb) -> bool:
        return self.held.__exit__(exc_type, exc, tb)
