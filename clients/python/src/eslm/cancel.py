"""Stopping a blocking acquire of the sync client from another thread (`LockBlock.cancel()`,
as kazoo's `Lock.cancel()`). A request that queues on the server cannot be interrupted in the
thread that sent it, so while it waits, the request runs in a helper thread and the caller waits
for either its answer or the cancel. A cancelled acquire raises `AcquireCancelled` at once; if
the server grants it later anyway, the helper releases that grant as soon as it arrives, so a
cancelled acquire never leaves a lock held. (The asyncio client needs none of this: cancelling
the task closes the request, and the server drops the waiter.)"""

from __future__ import annotations

import threading
from typing import Any, Callable

from .errors import AcquireCancelled


class Cancel:
    """One cancel signal, for the acquires of one `LockBlock`. `cancel()` stops the acquire
    waiting now, if any, and every later one until `reset()`."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.requested = False

    def cancel(self) -> None:
        with self._cond:
            self.requested = True
            self._cond.notify_all()

    def reset(self) -> None:
        with self._cond:
            self.requested = False

    def check(self) -> None:
        if self.requested:
            raise AcquireCancelled("the acquire was cancelled")

    def sleep(self, seconds: float) -> None:
        """Sleeps `seconds` (a backoff between retries) unless cancelled first."""
        with self._cond:
            if self._cond.wait_for(lambda: self.requested, seconds):
                raise AcquireCancelled("the acquire was cancelled")

    def call(self, send: Callable[[], Any], abandoned: Callable[[Any], None]) -> Any:
        """`send()` in a helper thread; its answer, or `AcquireCancelled` as soon as cancelled.
        An answer that arrives after the cancel goes to `abandoned` (in the helper thread)."""
        self.check()
        outcome: dict = {}

        def run() -> None:
            result: tuple[Any, BaseException | None]
            try:
                result = (send(), None)
            except BaseException as e:  # handed to the caller, who raises it
                result = (None, e)
            with self._cond:
                outcome["result"] = result
                late = outcome.get("abandoned", False)
                self._cond.notify_all()
            if late and result[1] is None:
                abandoned(result[0])

        threading.Thread(target=run, name="eslm-acquire", daemon=True).start()
        with self._cond:
            self._cond.wait_for(lambda: "result" in outcome or self.requested)
            if "result" not in outcome:
                outcome["abandoned"] = True
                raise AcquireCancelled("the acquire was cancelled while it waited")
        reply, error = outcome["result"]
        if error is not None:
            raise error
        return reply
