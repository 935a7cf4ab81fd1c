"""Leader elections (docs/API.md "Elections") in the sync client: a leadership is a held lock of
scope `election` (the candidate its owner, the term its fencing token), so it is renewed by the
watchdog, loss-watched and resigned at exit as a lock is; its loss watch is the election's
`_observe` of its own term. `LeaderLoop` campaigns, runs the caller's work while leader and stops
that work as soon as the leadership is known lost.

What the loop guards against (the known failures of leader recipes such as Curator's
LeaderLatch/LeaderSelector and etcd's Campaign):

- *Two leaders at once in one process*: every loop campaigns under a candidate of its own
  (the server gives a candidate that already leads its leadership back, so two loops sharing
  one would both believe they lead).
- *A missed loss*: the observe names the term, and answers at once when that term is no longer
  the current one, so a leadership that ended before the watch arrived is still reported; a
  renewal that finds it gone reports it too; and a leadership whose renewals all hang is given
  up on the client's clock when its lease, counted from before the request that granted or
  renewed it, runs out, which is no later than the server ends it.
- *A campaign that hangs*: each campaign waits at most one `round_wait` on the server (its
  request times out soon after), so a lost session, a stop or a dead node never blocks the loop.
- *Work without a term*: the work starts only with a fresh leadership (one found lost, or whose
  lease ran out while the answer travelled, is resigned unused), and its `stopping` event is set
  the moment the leadership is lost or the loop stopped."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable


from .durations import Duration, to_millis
from .errors import BadRequest, InvalidArgument, LockConflict, LockError, LockWaitTimeout
from .held import HeldLock
from .options import ELECTION, LockOptions, check_name, path_of
from . import steps

log = logging.getLogger("eslm")

# Pause before campaigning again after a campaign failed (a 503 beyond its retries, no answer).
RETRY_PAUSE_S = 1.0
# How long, and how often, a loop whose campaign was aborted checks that it is not elected.
WITHDRAW_WITHIN_S = 5.0
WITHDRAW_POLL_S = 0.05


class LeadershipMixin:
    """What a sync and an asyncio leadership add to a held lock: its name, term and value."""

    grants: tuple
    _lease_end: float

    def _elected(self, answer: dict) -> None:
        self.value: str | None = answer.get("value")

    @property
    def name(self) -> str:
        return self.grants[0].key

    @property
    def term(self) -> int:
        """The leadership's term: larger than every earlier one of the election, a fencing
        token for the leader's writes (docs/API.md "The fencing recipe")."""
        return self.grants[0].fencing_token

    def lease_left(self) -> float:
        """Seconds left of the lease as this client knows it (it ends no later on the server)."""
        return self._lease_end - time.monotonic()


class Leadership(LeadershipMixin, HeldLock):
    """A leadership of a sync client (`with locks.leadership("scheduler") as lead:`): `lead.term`,
    `lead.value`, `lead.lost`, and `lead.stopping`, an event set when the leadership is lost or
    let go (or its `LeaderLoop` stopped) that long work waits on or checks between steps."""

    def __init__(self, client, options, answer, started):
        super().__init__(client, options, answer, started)
        self._elected(answer)
        self.stopping = threading.Event()

    def start_watchdog(self) -> None:
        """Starts the watchdog, and the guard thread that gives the leadership up when its lease runs out."""
        super().start_watchdog()
        if self.watched:
            threading.Thread(target=self._guard, name="eslm-lease-guard", daemon=True).start()

    def _guard(self) -> None:
        """Gives the leadership up when its lease runs out on this client's clock with no
        renewal in between (renewals that hang never answer a loss themselves)."""
        while not self.stopping.wait(max(0.0, self.lease_left())):
            if self.lease_left() <= 0:
                self.lose("its lease ran out before a renewal succeeded")
                return

    def _lost_now(self) -> None:
        self.stopping.set()

    def mark_released(self) -> None:
        super().mark_released()
        self.stopping.set()


def election_steps(client, name: str):
    """`GET /_elections/{name}`: leader, value, term (0: none), lease_ms, candidates."""
    return steps.simple("GET", path_of(check_name(name, "name"), "", ELECTION), None, client.retry_for_ms / 1000)


def observe_steps(name: str, term: int, wait: Duration):
    """`GET /_elections/{name}/_observe`: the state as soon as the term is not `term`."""
    check_name(name, "name")
    if isinstance(term, bool) or not isinstance(term, int) or term < 0:
        raise InvalidArgument(f"[term] must be a term (a whole number, 0 for none), got [{term!r}]")
    return steps.watch(name, term, to_millis(wait, "wait"), ELECTION)


class LoopSettings:
    """A leader loop's checked arguments, shared by `LeaderLoop` and `AsyncLeaderLoop`."""

    def __init__(self, client, name: str, work: Callable, *, candidate: str | None = None,
                 value: str | None = None, lease: Duration | None = None, round_wait: Duration = "10s",
                 on_lost=None, cancel_on_lost: bool = False):
        if not callable(work):
            raise InvalidArgument(f"[work] must be callable with the leadership, got [{work!r}]")
        if to_millis(round_wait, "round_wait") == 0:
            raise InvalidArgument("[round_wait] must be longer than zero: a campaign round that never waits "
                                  "would poll the server")
        self.client = client
        self.work = work
        # Each loop its own candidate: two loops of one owner would share one leadership.
        candidate = candidate if candidate is not None else client.fresh_owner()
        self.options = LockOptions.leadership(name, candidate=candidate, value=value, wait=round_wait,
                                              lease=lease, on_lost=on_lost, cancel_on_lost=cancel_on_lost)
        self.candidate = candidate
        self.terms: list[int] = []  # the terms this loop led, in order
        self.leadership = None  # the current leadership, while the work runs
        self.error: BaseException | None = None  # what ended the loop, if not a stop

    def fresh(self, lead, stopped: bool) -> bool:
        """Whether a leadership just won may run the work: not lost, lease left, not stopped."""
        return not stopped and not lead.lost and lead.lease_left() > 0

    def campaign_failed(self, error: BaseException) -> float | None:
        """After a failed campaign: None to campaign again at once (the round ran out), else the
        pause before the next; a refused request (a bad argument) is raised."""
        if isinstance(error, (LockWaitTimeout, LockConflict)):
            return None
        if isinstance(error, (BadRequest, InvalidArgument)):
            raise error
        if isinstance(error, LockError):
            log.warning("campaign of [%s] in [%s] failed, again in %.0f s: %s", self.candidate,
                        self.options.targets[0].key, RETRY_PAUSE_S, error)
            return RETRY_PAUSE_S
        raise error

    def withdraw_steps(self):
        """After an aborted campaign (asyncio's stop cancels it): the server may have elected
        this candidate just before the abort arrived, or not yet dropped its waiter. Resigns
        whatever term it leads, until it neither leads nor is queued (within a few seconds)."""
        deadline = time.monotonic() + WITHDRAW_WITHIN_S
        name = self.options.targets[0].key
        while time.monotonic() < deadline:
            state = yield from election_steps(self.client, name)
            if state["leader"] == self.candidate:
                resign = {"candidate": self.candidate, "term": state["term"]}
                yield from steps.simple("POST", path_of(name, "/_release", ELECTION), resign,
                                        self.client.retry_for_ms / 1000)
            elif self.candidate not in state["candidates"]:
                return
            else:
                yield steps.Sleep(WITHDRAW_POLL_S)  # its waiter is being dropped

    def work_ended(self, lead, error: BaseException | None, stopping: bool) -> None:
        """After the work: a failure while still leader (`stopping` not yet set when it ended,
        before its resignation sets it) ends the loop."""
        if error is None:
            return
        if stopping:
            log.info("work of %r ended with %r after the leadership was lost or stopped", lead, error)
            return
        self.error = error
        raise error


class LeaderLoop(LoopSettings):
    """`locks.leader_loop(name, work, ...)`: campaigns in rounds of `round_wait`, calls
    `work(lead)` in the loop's thread while leader, resigns when the work returns, and
    campaigns again until stopped. The work must return soon after `lead.stopping` is set (a
    thread cannot be interrupted); it is set as soon as the leadership is lost or `stop()` is
    called. Work that raises while still leader ends the loop (with the leadership resigned).
    `with locks.leader_loop(...) as loop:` runs it in a daemon thread until the block ends."""

    def __init__(self, client, name: str, work: Callable[[Leadership], Any], **settings):
        super().__init__(client, name, work, **settings)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run(self) -> None:
        """Runs the loop in this thread until `stop()` (or the work fails while leader)."""
        while not self._stop.is_set():
            lead = self._campaign()
            if lead is not None:
                self._lead(lead)

    def _campaign(self) -> Leadership | None:
        try:
            lead = self.client.take(self.options)
        except LockError as e:
            pause = self.campaign_failed(e)
            if pause:
                self._stop.wait(pause)
            return None
        if self.fresh(lead, self._stop.is_set()):
            return lead
        self._let_go(lead)
        return None

    def _lead(self, lead: Leadership) -> None:
        self.leadership = lead
        self.terms.append(lead.term)
        if self._stop.is_set():  # stop() may have read `leadership` before it was set
            lead.stopping.set()
        error = None
        try:
            self.work(lead)
        except Exception as e:  # noqa: BLE001 - judged by work_ended
            error = e
        finally:
            stopping = lead.stopping.is_set()
            self.leadership = None
            self._let_go(lead)
        self.work_ended(lead, error, stopping)

    @staticmethod
    def _let_go(lead: Leadership) -> None:
        """Resigns (a lost leadership's resignation frees nothing newer: it names its term)."""
        lead.stopping.set()
        failed = lead._close()
        if failed is not None and not lead.lost:
            log.warning("resigning %r failed (its lease will end it): %s", lead, failed)

    def start(self) -> "LeaderLoop":
        """Runs the loop in a daemon thread."""
        if self._thread is not None:
            raise InvalidArgument("this leader loop was already started")
        self._thread = threading.Thread(target=self._run_caught, name=f"eslm-leader-{self.candidate}", daemon=True)
        self._thread.start()
        return self

    def _run_caught(self) -> None:
        try:
            self.run()
        except BaseException as e:  # noqa: BLE001 - kept in `error` for the starter
            self.error = e
            log.error("leader loop of [%s] ended: %s", self.candidate, e)

    def stop(self, timeout: float = 60.0) -> bool:
        """Stops the loop: the work's `stopping` is set, the leadership resigned when the work
        returns, and no new campaign starts. Waits for the loop's thread at most `timeout`
        (a campaign in flight ends within its round); returns whether it ended."""
        self._stop.set()
        lead = self.leadership
        if lead is not None:
            lead.stopping.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def __enter__(self) -> "LeaderLoop":
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> bool:
        self.stop()
        return False
