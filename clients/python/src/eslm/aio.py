"""The asyncio client: `AsyncLocks` over the user's own `elasticsearch.AsyncElasticsearch`
(`pip install 'elasticsearch[async]'`, which brings aiohttp). The same operations as the sync
client (eslm/steps.py, the handle and session bases), run with awaited calls; watchdogs and
keep-alives are tasks. A lock is lost the same way, and with `cancel_on_lost=True` the task
running the block is cancelled at once, its block then ending with `LockLost`."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import time
import weakref
from typing import TYPE_CHECKING, Any, Iterable

from . import documents, steps
from .aio_election import AsyncLeaderLoop, AsyncLeadershipBase
from .client import ClientBase
from .groups import GroupApi
from .durations import Duration
from .election import election_steps, observe_steps
from .errors import InvalidArgument, LockConflict, LockNotHeld, LockWaitTimeout
from .fenced import FencedResult
from .held import HandleBase, holders_of
from .options import LockOptions, unmoded
from .session import SessionBase

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import AsyncAcquireArgs, AsyncLockArgs, AsyncLoopArgs, AsyncReadWriteArgs

log = logging.getLogger("eslm")


class AsyncLockApi:
    """`lock`, `lock_many`, `acquire` and `try_lock` of an `AsyncLocks` or an `AsyncSession`:
    as for the sync `LockApi` (same options), plus `cancel_on_lost`."""

    _client: "AsyncLocks"
    _session: Any = None

    def lock(self, key: str, **options: Unpack[AsyncLockArgs]) -> "AsyncLockBlock":
        """`async with alocks.lock("k", lease="30s") as held:` (see `Locks.lock`); with
        `reentrant=True` the owner is the calling task's."""
        return AsyncLockBlock(self._client, LockOptions.single(key, session=self._session, **options))

    def read_lock(self, key: str, **options: Unpack[AsyncReadWriteArgs]) -> "AsyncLockBlock":
        """`lock(key, mode="shared", ...)`: a read lock (see `Locks.read_lock`)."""
        return self.lock(key, mode="shared", **unmoded(options, "read_lock"))

    def write_lock(self, key: str, **options: Unpack[AsyncReadWriteArgs]) -> "AsyncLockBlock":
        """`lock(key, mode="exclusive", ...)`: a write lock (see `Locks.write_lock`)."""
        return self.lock(key, mode="exclusive", **unmoded(options, "write_lock"))

    def lock_many(self, locks: Iterable[Any], **options: Unpack[AsyncAcquireArgs]) -> "AsyncLockBlock":
        """All or nothing (see `Locks.lock_many`)."""
        return AsyncLockBlock(self._client, LockOptions.many(locks, session=self._session, **options))

    async def acquire(self, key: str, **options: Unpack[AsyncLockArgs]) -> "AsyncHeldLock":
        """Acquires now (see `Locks.acquire`); `await held.release()` or `async with held:`."""
        return await self._client.take(LockOptions.single(key, session=self._session, **options))

    def semaphore(self, name: str, limit: int, permits: int = 1,
                  **options: Unpack[AsyncAcquireArgs]) -> "AsyncLockBlock":
        """`async with alocks.semaphore("api", limit=4) as held:` (see `Locks.semaphore`)."""
        return AsyncLockBlock(self._client, LockOptions.semaphore(
            name, limit, permits, session=self._session, **options))

    def leadership(self, name: str, *, candidate: str | None = None, value: str | None = None,
                   wait: Duration | None = None, lease: Duration | None = None, on_lost=None,
                   cancel_on_lost: bool = False) -> "AsyncLockBlock":
        """`async with alocks.leadership("scheduler", wait="30s") as lead:` (see
        `Locks.leadership`); `cancel_on_lost=True` cancels the block's task when it is lost."""
        return AsyncLockBlock(self._client, LockOptions.leadership(
            name, candidate=candidate, value=value, wait=wait, lease=lease, session=self._session,
            on_lost=on_lost, cancel_on_lost=cancel_on_lost))

    async def try_lock(self, key: str, **options: Unpack[AsyncLockArgs]) -> "AsyncHeldLock | None":
        """`acquire` without waiting (`blocking=False`): None when the key is busy (see
        `Locks.try_lock`)."""
        try:
            options_ = LockOptions.single(key, session=self._session, **options)
            return await self._client.take(options_.waiting(False, None))
        except LockConflict:
            return None


class AsyncLockBlock:
    """What `lock()` returns: acquires on `__aenter__`, releases on `__aexit__`."""

    def __init__(self, client: "AsyncLocks", options: LockOptions):
        self.client = client
        self.options = options
        self.held: AsyncHeldLock | None = None

    async def __aenter__(self) -> "AsyncHeldLock":
        return await self._take(self.options)

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        held, self.held = self.held, None
        assert held is not None, "__aexit__ without a successful __aenter__"
        return await held.__aexit__(exc_type, exc, tb)

    async def acquire(self, blocking: bool | None = None, timeout: Duration | None = None) -> bool:
        """As `LockBlock.acquire` (redis-py's asyncio `Lock`): True once held, False when busy
        with `blocking=False` or when the `timeout` ran out. Cancel the awaiting task to stop a
        waiting acquire: its request is closed and the server drops the waiter."""
        options = self.options.waiting(blocking, timeout)
        try:
            await self._take(options)
        except (LockConflict, LockWaitTimeout):
            return False
        return True

    async def release(self) -> None:
        """Releases what `acquire` took (`LockNotHeld` when this object holds nothing)."""
        held, self.held = self.held, None
        if held is None:
            raise LockNotHeld(f"{self.options.targets[0].key} is not held through this lock object")
        await held.release()

    async def _take(self, options: LockOptions) -> "AsyncHeldLock":
        if self.held is not None and not self.held.released:
            raise InvalidArgument(f"{self.options.targets[0].key} is already held through this lock object")
        self.held = await self.client.take(options)
        return self.held


class AsyncCallbacks:
    """An `on_lost` callback may be a coroutine function: its coroutine runs as a task."""

    def _notify(self, result: Any) -> None:
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._callbacks = getattr(self, "_callbacks", set()) | {task}
            task.add_done_callback(self._callbacks.discard)


async def watch(target) -> None:
    """The watchdog (or keep-alive) task: `target.watch_steps()` every `renew_interval()`."""
    while target.watching():
        await asyncio.sleep(target.renew_interval())
        await target.client.attempt(target.watch_steps())


def stop(task: asyncio.Task | None) -> None:
    if task is not None:
        task.cancel()


class AsyncHeldLock(AsyncCallbacks, HandleBase):
    """A held lock of an `AsyncLocks`: `async with held:` releases it at the end."""

    def __init__(self, client, options, answer, started):
        super().__init__(client, options, answer, started)
        self._watchdog: asyncio.Task | None = None
        self._loss_watches: list[asyncio.Task] = []
        self._block: asyncio.Task | None = asyncio.current_task() if options.cancel_on_lost else None
        self._cancelled = False

    def start_watchdog(self) -> None:
        """Starts its watchdog task and one loss-watch task per grant (see `HeldLock`)."""
        if self.watched:
            self._watchdog = asyncio.ensure_future(watch(self))
        if self.loss_watched:
            self._loss_watches = [asyncio.ensure_future(self._watch_loss(g)) for g in self.grants]

    async def _watch_loss(self, g) -> None:
        """One grant's loss watch, holding one of the client's `loss_watches` slots."""
        async with self.client.loss_slots:
            await self.client.attempt(self.loss_watch_steps(g))

    def lose(self, reason: str, cause: BaseException | None = None) -> None:
        super().lose(reason, cause)
        if self.lost and self._block is not None and not self._cancelled:
            self._cancelled = True
            self._block.cancel(f"lock {self.keys} lost")

    async def renew(self, lease=None) -> None:
        """Renews now (the watchdog does it by itself). Raises LockNotHeld if it is gone."""
        await self.client.run(self.renew_steps(lease))

    async def index(self, index: str, document: dict, *, id: str, key: str | None = None,
                    refresh: Any = None) -> dict:
        """See `HeldLock.index`: a write fenced by this lock's token."""
        return await self.client.run(self.fenced_index_steps(index, document, id, key, refresh))

    async def update(self, index: str, id: str, change: Any, *, key: str | None = None,
                     refresh: Any = None) -> dict | None:
        """See `HeldLock.update`: a fenced change (`change` a partial document, field
        operations, or a plain function of the source)."""
        return await self.client.run(self.update_steps(index, id, change, key, refresh))

    async def read(self, index: str, id: str, *, key: str | None = None) -> dict | None:
        """See `HeldLock.read`: the fenced read."""
        return await self.client.run(self.read_steps(index, id, key))

    async def delete(self, index: str, id: str, *, key: str | None = None, refresh: Any = None) -> None:
        """See `HeldLock.delete`: the fenced delete (a tombstone)."""
        await self.client.run(self.delete_steps(index, id, key, refresh))

    async def bulk(self, changes: Iterable[Any], *, key: str | None = None,
                   refresh: Any = None) -> list[FencedResult]:
        """See `HeldLock.bulk`: fenced changes in one `_bulk`, a result per change."""
        return await self.client.run(self.bulk_steps(changes, key, refresh))

    async def downgrade(self) -> None:
        """Exclusive to shared without letting go (see `HeldLock.downgrade`)."""
        await self.client.run(self.downgrade_steps())

    async def extend(self, lease) -> None:
        """Renews now for `lease`, counted from now (see `HeldLock.extend`)."""
        await self.client.run(self.renew_steps(lease))
        self.options = dataclasses.replace(self.options, lease_ms=self.lease_ms)

    async def owned(self) -> bool:
        """Whether the server still has this grant (see `HeldLock.owned`)."""
        return await self.client.run(self.owned_steps())

    async def locked(self) -> bool:
        """Whether anyone holds the key now (see `HeldLock.locked`)."""
        return await self.client.run(self.locked_steps())

    async def release(self) -> None:
        """Releases the lock; raises `LockLost` if it turned out lost (now or before)."""
        self.raise_if_lost(await self._close())

    async def _close(self) -> BaseException | None:
        stop(self._watchdog)
        for task in self._loss_watches:
            stop(task)
        self._block = None  # a loss found from here on ends the block, it cancels nothing
        return await self.client.attempt(self.release_steps())

    async def __aenter__(self) -> "AsyncHeldLock":
        return self

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        if self._cancelled:
            exc = await self._take_back_cancellation(exc)
        error = self.exit_error(exc, await self._close())
        if error is not None:
            raise error
        return False

    async def _take_back_cancellation(self, exc):
        """The block was cancelled by this lock's loss: that cancellation is not the caller's.
        If the block ended before it arrived, it is taken here; either way it is withdrawn, and
        the block ends with `LockLost` (its context the CancelledError)."""
        if not isinstance(exc, asyncio.CancelledError):
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError:
                pass
        task = asyncio.current_task()
        if hasattr(task, "uncancel"):
            task.uncancel()
        return None if isinstance(exc, asyncio.CancelledError) else exc


class AsyncLeadership(AsyncLeadershipBase, AsyncHeldLock):
    """A leadership of an `AsyncLocks` (see eslm/aio_election.py)."""

    def __init__(self, client, options, answer, started):
        super().__init__(client, options, answer, started)
        self._start_leading(answer)

    def start_watchdog(self) -> None:
        """Starts the watchdog, and the guard that gives the leadership up when its lease runs out."""
        super().start_watchdog()
        self._start_guard()

    def _lost_now(self) -> None:
        self.stopping.set()

    def mark_released(self) -> None:
        super().mark_released()
        self.stopping.set()


class AsyncSession(AsyncCallbacks, SessionBase, AsyncLockApi):
    """A session of an `AsyncLocks` (`async with alocks.session(ttl="30s") as s:`)."""

    def __init__(self, client, ttl, routing, on_lost):
        super().__init__(client, ttl, routing, on_lost)
        self._keeper: asyncio.Task | None = None

    async def __aenter__(self) -> "AsyncSession":
        self.client.check_open()
        await self.client.run(self.create_steps())
        self._keeper = asyncio.ensure_future(watch(self))
        return self

    async def end(self) -> None:
        """Ends the session now; raises `SessionLost` if it was lost."""
        self.raise_if_lost(await self._close())

    async def _close(self) -> BaseException | None:
        stop(self._keeper)
        return await self.client.attempt(self.end_steps())

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        error = self.exit_error(exc, await self._close())
        if error is not None:
            raise error
        return False


class AsyncLocks(ClientBase, AsyncLockApi, GroupApi):
    """Locks over an `AsyncElasticsearch` client; the same settings as `Locks`. Tasks sharing
    it exclude each other (an owner per acquisition); `reentrant=True` is scoped to the task.
    `async with AsyncLocks(aes) as alocks:` (or `await alocks.close()`) lets go of everything
    at the end."""

    def __init__(self, es: Any, owner: str | None = None, *, retry_for: Duration = "10s",
                 renew_fraction: float = 1 / 3, loss_watches: int = 4):
        super().__init__(es, owner, retry_for=retry_for, renew_fraction=renew_fraction,
                         loss_watches=loss_watches)
        self.loss_slots = asyncio.Semaphore(max(1, self.loss_watches))
        self._task_owners: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    async def __aenter__(self) -> "AsyncLocks":
        return self

    async def __aexit__(self, exc_type, exc, tb) -> None:
        await self.close()

    async def close(self) -> None:
        """Releases every lock and ends every session it still holds (errors logged), which
        ends their watchdog and watch tasks; afterwards acquires raise `InvalidArgument`. The
        `AsyncElasticsearch` is the caller's to close. On a `with_owner` view it does nothing."""
        if self.view_of is not None or self.closed:
            return
        self.closed = True
        for held in list(self.live):
            error = await held._close()
            if error is not None:
                log.warning("closing %r: %r not let go cleanly: %s", self, held, error)

    def scoped_owner(self) -> str:
        """The calling task's owner for `reentrant=True` (outside a task: the thread's)."""
        task = asyncio.current_task()
        if task is None:
            return super().scoped_owner()
        owner = self._task_owners.get(task)
        if owner is None:
            owner = self._task_owners[task] = f"{self.fresh_owner()}-task"
        return owner

    @property
    def _client(self) -> "AsyncLocks":
        return self

    async def run(self, operation: steps.Steps) -> Any:
        """Runs one operation of eslm/steps.py with awaited calls."""
        step = steps.Stepper(operation)
        while not step.done:
            with steps.Outcome() as out:
                out.reply = await self._do(step.effect)
            step.settle(out.reply, out.error)
        return step.value

    async def attempt(self, operation: steps.Steps) -> BaseException | None:
        """`run`, returning the lock or transport error it raised instead of raising it."""
        with steps.Outcome() as out:
            await self.run(operation)
        return out.error

    async def _do(self, effect) -> Any:
        if isinstance(effect, steps.Sleep):
            return await asyncio.sleep(effect.seconds)
        return (await effect.send(self.es)).body

    async def take(self, options: LockOptions) -> AsyncHeldLock:
        """See `Locks.take`."""
        self.check_open()
        options = dataclasses.replace(options, owner=self.owner_for(options))
        options = dataclasses.replace(options, acquisition=self.acquisition_for(options))
        started = time.monotonic()
        handle = AsyncLeadership if options.election else AsyncHeldLock
        held = handle(self, options, await self.run(steps.acquire(options.owner, options)), started)
        await self.run(held.arrival_steps())
        self.live.add(held)
        held.start_watchdog()
        return held

    async def optimistic_update(self, index: str, id: str, change, *, retries: int = documents.DEFAULT_RETRIES,
                                refresh: Any = None) -> dict | None:
        """See `Locks.optimistic_update` (`change` is a plain function)."""
        return await self.run(documents.optimistic_update(index, id, change, retries, refresh))

    def session(self, ttl: Duration | None = None, routing: str | None = None, on_lost=None) -> AsyncSession:
        """`async with alocks.session(ttl="30s") as s:` (see `Locks.session`)."""
        return AsyncSession(self, ttl, routing, on_lost)

    async def force_release(self, key: str, *, scope: str = "key", reason: str | None = None) -> dict:
        """See `Locks.force_release`."""
        return await self.run(self.force_release_steps(key, scope, reason))

    async def set_semaphore_limit(self, name: str, limit: int) -> dict:
        """See `Locks.set_semaphore_limit`."""
        return await self.run(self.semaphore_limit_steps(name, limit))

    async def get(self, key: str, *, scope: str = "key") -> dict:
        """See `Locks.get`."""
        return await self.run(self.get_steps(key, scope))

    async def locked(self, key: str, *, scope: str = "key") -> bool:
        """See `Locks.locked`."""
        return bool(holders_of(await self.get(key, scope=scope)))

    async def watch(self, key: str, token: int, wait: Duration = "30s", *, scope: str = "key") -> dict:
        """See `Locks.watch`."""
        return await self.run(self.watch_steps(key, token, wait, scope))

    async def election(self, name: str) -> dict:
        """See `Locks.election`."""
        return await self.run(election_steps(self, name))

    async def observe(self, name: str, term: int = 0, wait: Duration = "30s") -> dict:
        """See `Locks.observe`."""
        return await self.run(observe_steps(name, term, wait))

    def leader_loop(self, name: str, work, **settings: Unpack[AsyncLoopArgs]) -> AsyncLeaderLoop:
        """An `AsyncLeaderLoop` running `await work(lead)` while leader (see `Locks.leader_loop`)."""
        return AsyncLeaderLoop(self, name, work, **settings)

    async def run_as_leader(self, name: str, work, **settings: Unpack[AsyncLoopArgs]) -> None:
        """Campaigns and runs `await work(lead)` while leader, again and again, until the task
        running this is cancelled (or the work fails while leader); the work is cancelled the
        moment its leadership is lost."""
        await AsyncLeaderLoop(self, name, work, **settings).run()
