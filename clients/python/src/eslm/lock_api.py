"""`lock`, `lock_many`, `acquire`, `semaphore`, `leadership` and `try_lock`: what the sync
`Locks` and a `Session` both offer (client.py, session.py), in a module of its own so that
neither imports the other for it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Protocol

from .cancel import Cancel
from .durations import Duration
from .errors import AcquireCancelled, InvalidArgument, LockConflict, LockNotHeld, LockWaitTimeout
from .held import HeldLock
from .options import LockOptions, unmoded

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import AcquireArgs, LockArgs, ReadWriteArgs


class Taker(Protocol):
    """What a `LockApi` acquires through: the sync `Locks` (`Locks.take`)."""

    def take(self, options: LockOptions, cancel: Cancel | None = None) -> HeldLock: ...

    def locked(self, key: str, *, scope: str = "key") -> bool: ...


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
        """A block that holds `key`: `with locks.lock("k", lease="30s") as held:`. Acquired on
        entry, waiting until granted (`timeout="10s"`: at most that, then LockWaitTimeout;
        `blocking=False`: LockConflict if busy), renewed by a watchdog while the block runs,
        released at its end; a lock lost meanwhile sets `held.lost`, calls `on_lost` and ends
        the block with `LockLost`. Also a lock object as redis-py's and kazoo's are:
        `lk.acquire()` answers True or False, `lk.release()`, `lk.cancel()` from another thread."""
        return LockBlock(self._client, self._options(LockOptions.single, key, options))

    def read_lock(self, key: str, **options: Unpack[ReadWriteArgs]) -> "LockBlock":
        """`lock(key, mode="shared", ...)`: the read half of a read-write lock. Readers hold it
        together; a writer (`write_lock`, or any exclusive lock of `key`) waits for every reader,
        and readers for the writer. Same options as `lock`, but `mode`."""
        return self.lock(key, mode="shared", **unmoded(options, "read_lock"))

    def write_lock(self, key: str, **options: Unpack[ReadWriteArgs]) -> "LockBlock":
        """`lock(key, mode="exclusive", ...)`: the write half of a read-write lock, alone on `key`.
        `held.downgrade()` turns it into a read lock without letting a writer in between."""
        return self.lock(key, mode="exclusive", **unmoded(options, "write_lock"))

    def lock_many(self, locks: Iterable[Any], **options: Unpack[AcquireArgs]) -> "LockBlock":
        """All or nothing (`POST /_locks/_acquire`): `locks` are keys or `{"key", "mode"?,
        "scope"?}` mappings; the options apply to the whole request."""
        return LockBlock(self._client, self._options(LockOptions.many, locks, options))

    def acquire(self, key: str, **options: Unpack[LockArgs]) -> HeldLock:
        """Acquires (waiting until granted unless `timeout=` or `blocking=False` says
        otherwise, as `lock`); the handle is released by `held.release()` or a `with held:`
        block."""
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
        waiting until elected (at most `wait` when given, then `LockWaitTimeout`; `wait=0`:
        `LockConflict` when someone leads). `lead.term` fences the leader's writes. Renewed by
        the watchdog, loss-watched with the election's observe, resigned at exit; a lost
        leadership sets `lead.lost` and `lead.stopping`, calls `on_lost` and ends the block with
        `LockLost`, as a lock's."""
        return LockBlock(self._client, LockOptions.leadership(
            name, candidate=candidate, value=value, wait=wait, lease=lease, session=self._session,
            on_lost=on_lost))

    def try_lock(self, key: str, **options: Unpack[LockArgs]) -> HeldLock | None:
        """`acquire` without waiting (`blocking=False`, whatever the options say): None when the
        key is busy (or its grant arrived too late to be handed over, `GrantExpired`)."""
        try:
            return self._client.take(self._options(LockOptions.single, key, options).waiting(False, None))
        except LockConflict:
            return None

    def _options(self, factory, what, options: dict) -> LockOptions:
        if options.get("cancel_on_lost"):
            raise InvalidArgument("[cancel_on_lost] is for the asyncio client (AsyncLocks) only")
        return factory(what, session=self._session, **options)


class LockBlock:
    """What `lock()` returns: a block (`with lk as held:` acquires on entry, releases at exit)
    and a lock object in the manner of redis-py's `Lock` and kazoo's `Lock`: `acquire()` answers
    whether it got the lock, `release()` lets it go, `locked()` says whether anyone holds the
    key, and `cancel()` from another thread stops a waiting `acquire` (which then answers False;
    a block's entry raises `AcquireCancelled`). One holder at a time per object: acquiring it
    again while held raises `InvalidArgument` (take another `lock()` for another holder)."""

    def __init__(self, client: Taker, options: LockOptions):
        self.client = client
        self.options = options
        self.held: HeldLock | None = None
        self._cancel = Cancel()

    def __enter__(self) -> HeldLock:
        return self._take(self.options)

    def __exit__(self, exc_type, exc, tb) -> bool:
        held, self.held = self.held, None
        assert held is not None, "__exit__ without a successful __enter__"
        return held.__exit__(exc_type, exc, tb)

    def acquire(self, blocking: bool | None = None, timeout: Duration | None = None) -> bool:
        """Acquires; True once held, False when it was not: busy with `blocking=False`, the
        `timeout` ran out, or another thread cancelled it. `blocking`/`timeout` given here
        replace those `lock()` was called with (redis-py's and kazoo's signature)."""
        options = self.options.waiting(blocking, timeout)
        try:
            self._take(options)
        except (LockConflict, LockWaitTimeout, AcquireCancelled):
            return False
        return True

    def release(self) -> None:
        """Releases what `acquire` took; `LockNotHeld` when this object holds nothing, `LockLost`
        when the lock turned out lost."""
        held, self.held = self.held, None
        if held is None:
            raise LockNotHeld(f"{self.options.targets[0].key} is not held through this lock object")
        held.release()

    def cancel(self) -> None:
        """Stops the `acquire` (or block entry) waiting now in another thread, if any."""
        self._cancel.cancel()

    def locked(self) -> bool:
        """Whether anyone holds the key now (this object or another holder)."""
        return self.held.locked() if self.held is not None else bool(self.client.locked(
            self.options.targets[0].key, scope=self.options.targets[0].scope))

    def owned(self) -> bool:
        """Whether this object holds the lock and the server still has its grant."""
        return self.held is not None and self.held.owned()

    def _take(self, options: LockOptions) -> HeldLock:
        if self.held is not None and not self.held.released:
            raise InvalidArgument(f"{self.options.targets[0].key} is already held through this lock object")
        self._cancel.reset()
        self.held = self.client.take(options, self._cancel)
        return self.held
