"""Leader elections in the asyncio client (see eslm/election.py for what the loop guards
against): `AsyncLeadership`, whose `stopping` is an `asyncio.Event`, and `AsyncLeaderLoop`, which
runs the work as a task and cancels it the moment the leadership is lost or the loop stopped."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable


from .election import LeadershipMixin, LoopSettings
from .errors import LockError

log = logging.getLogger("eslm")


class AsyncLeadershipBase(LeadershipMixin):
    """A leadership of an `AsyncLocks` (mixed into its held lock in eslm/aio.py): `term`,
    `value`, `lost`, `stopping` (an `asyncio.Event`), and a guard task that gives it up when
    its lease runs out on this client's clock with no renewal in between."""

    def _start_leading(self, answer: dict) -> None:
        self._elected(answer)
        self.stopping = asyncio.Event()
        self._guard_task: asyncio.Task | None = None

    def _start_guard(self) -> None:
        if self.watched:
            self._guard_task = asyncio.ensure_future(self._guard())

    async def _guard(self) -> None:
        while not self.stopping.is_set():
            try:
                await asyncio.wait_for(self.stopping.wait(), max(0.0, self.lease_left()))
            except asyncio.TimeoutError:
                if self.lease_left() <= 0:
                    self.lose("its lease ran out before a renewal succeeded")

    def cancel_on_loss(self, task: asyncio.Task) -> None:
        """Cancels `task` when the leadership is lost (at once if it already is)."""
        self._block = task
        if self.lost and not self._cancelled:
            self._cancelled = True
            task.cancel(f"leadership of {self.keys} lost")


class AsyncLeaderLoop(LoopSettings):
    """`alocks.leader_loop(name, work, ...)`: as `LeaderLoop`, with `work` a coroutine function
    run as a task that is **cancelled** when the leadership is lost or the loop stopped; `await
    loop.run()` until `loop.stop()` (or cancel the task running it)."""

    def __init__(self, client, name: str, work: Callable[[Any], Awaitable[Any]], **settings):
        super().__init__(client, name, work, **settings)
        self._stopped = False
        self._current: asyncio.Future | None = None  # the campaign or the work in flight

    async def run(self) -> None:
        """Runs the loop in this task until `stop()` or the task is cancelled (or the work fails while leader)."""
        while not self._stopped:
            lead = await self._campaign()
            if lead is not None:
                await self._lead(lead)

    async def _campaign(self):
        self._current = asyncio.ensure_future(self.client.take(self.options))
        try:
            lead = await self._current
        except asyncio.CancelledError:
            if self._stopped:
                error = await self.client.attempt(self.withdraw_steps())
                if error is not None:
                    log.warning("withdrawing [%s] after its aborted campaign failed: %s", self.candidate, error)
                return None
            raise
        except LockError as e:
            pause = self.campaign_failed(e)
            if pause:
                await asyncio.sleep(pause)
            return None
        finally:
            self._current = None
        if self.fresh(lead, self._stopped):
            return lead
        await self._let_go(lead)
        return None

    async def _lead(self, lead) -> None:
        self.leadership = lead
        self.terms.append(lead.term)
        work = asyncio.ensure_future(self.work(lead))
        self._current = work
        lead.cancel_on_loss(work)
        if self._stopped:
            work.cancel()
        try:
            await asyncio.wait({work})
        finally:
            stopping = lead.stopping.is_set()
            work.cancel()  # the loop's own task was cancelled: so is the work
            self.leadership = None
            self._current = None
            await self._let_go(lead)
        error = None if work.cancelled() else work.exception()
        self.work_ended(lead, error, stopping)

    @staticmethod
    async def _let_go(lead) -> None:
        lead.stopping.set()
        failed = await lead._close()
        if failed is not None and not lead.lost:
            log.warning("resigning %r failed (its lease will end it): %s", lead, failed)

    def stop(self) -> None:
        """Stops the loop: the work is cancelled (its leadership then resigned), a campaign in
        flight aborted, and no new one starts; `run()` returns."""
        self._stopped = True
        lead = self.leadership
        if lead is not None:
            lead.stopping.set()
        if self._current is not None:
            self._current.cancel()
