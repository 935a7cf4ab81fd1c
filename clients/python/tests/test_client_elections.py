"""Leader elections in the Python client against a real node (docs/API.md "Elections"): the
leadership block (term, value, renewal past its lease, resignation handing over to the next
candidate), the state and observe calls, the leader loop with several candidates (an in-test
ledger of who believes to lead: never two at once, terms strictly increasing), the work stopped
within a second of losing the leadership, and bad arguments refused with clear errors.

How a leadership is ended from outside: as an operator evicts a dead leader, with
`POST /_locks/{name}/_force_release` and scope `election` (docs/API.md "Administration"); the
loop learns it only through its loss watch (the observe)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import eslm
from eslm import steps
from lockclient import unique, wait_until
from test_client_async import run, until


def force_release(name: str) -> dict:
    """The step that evicts the leader of `name` without its client knowing (see the docstring)."""
    return steps.simple("POST", f"/_locks/{name}/_force_release",
                        {"scope": "election", "reason": "test: leader evicted"}, 5)


def evict_leader(locks: eslm.Locks, name: str, candidate: str, term: int) -> dict:
    """Ends `candidate`'s leadership of `term` without its client knowing: evicts the leader,
    after checking it is that leadership."""
    state = locks.election(name)
    assert (state["leader"], state["term"]) == (candidate, term), state
    return locks.run(force_release(name))


def watches(locks: eslm.Locks) -> int:
    """Watches (loss watches and observes) waiting on the node now."""
    return locks.run(steps.simple("GET", "/_locks/_stats", None, 5))["total"]["watches"]


class Ledger:
    """Who believes to lead, with their terms: entering while another believes to lead is an
    overlap (the terms of those who believed to lead), a term not larger than every earlier one a
    term error."""

    def __init__(self):
        self.mutex = threading.Lock()
        self.leading: dict[str, int] = {}
        self.history: list[tuple[str, int]] = []
        self.overlaps: list[tuple[int, ...]] = []
        self.term_errors: list[str] = []

    def enter(self, candidate: str, term: int) -> None:
        with self.mutex:
            if self.leading:
                self.overlaps.append(tuple(self.leading.values()))
            if self.history and term <= self.history[-1][1]:
                self.term_errors.append(f"term {term} of {candidate} after {self.history[-1]}")
            self.leading[candidate] = term
            self.history.append((candidate, term))

    def leave(self, candidate: str) -> None:
        with self.mutex:
            self.leading.pop(candidate, None)

    def count(self) -> int:
        with self.mutex:
            return len(self.history)


def test_a_leadership_block_leads_is_renewed_and_hands_over_at_exit(locks, other):
    name = unique("election")
    with locks.leadership(name, value="10.0.0.7:5432", lease="1s") as lead:
        assert isinstance(lead, eslm.Leadership) and lead.name == name and lead.term > 0
        assert lead.value == "10.0.0.7:5432" and not lead.stopping.is_set()
        with pytest.raises(eslm.LockConflict):
            other.leadership(name, wait=0).__enter__()
        waiting = []
        thread = threading.Thread(target=lambda: waiting.append(other.leadership(name, wait="20s").__enter__()))
        thread.start()
        wait_until(lambda: len(locks.election(name)["candidates"]) == 1, 10, message="queued")
        started = time.monotonic()
        wait_until(lambda: time.monotonic() - started > 2.5, 5)  # past the 1 s lease: renewed
        state = locks.election(name)
        assert (state["leader"], state["term"], state["value"]) == (lead.owner, lead.term, "10.0.0.7:5432")
        assert not lead.lost
    assert lead.stopping.is_set() and lead.released
    thread.join(10)
    assert waiting and waiting[0].term > lead.term, "the resignation elected the queued candidate"
    assert locks.election(name)["leader"] == waiting[0].owner != lead.owner
    waiting[0].__exit__(None, None, None)
    assert locks.election(name)["leader"] is None


def test_observe_answers_when_the_term_changes(locks, other):
    name = unique("election")
    quiet = locks.observe(name, 0, "200ms")
    assert (quiet["changed"], quiet["leader"], quiet["term"]) == (False, None, 0)
    with locks.leadership(name) as lead:
        now = locks.observe(name, 0, "5s")
        assert (now["changed"], now["leader"], now["term"]) == (True, lead.owner, lead.term)
        ended, before = [], watches(locks)
        thread = threading.Thread(target=lambda: ended.append(other.observe(name, lead.term, "20s")))
        thread.start()
        wait_until(lambda: watches(locks) > before, 10, message="the observe waits on the server")
        assert not ended
    thread.join(10)
    assert ended and ended[0]["changed"] and ended[0]["term"] == 0


def test_a_leadership_ended_from_outside_is_lost_within_a_second(locks, noticed):
    name = unique("election")
    told = []
    with pytest.raises(eslm.LockLost) as lost:
        with locks.leadership(name, lease="60s", on_lost=told.append) as lead:
            ended_at = time.monotonic()
            evict_leader(locks, name, lead.owner, lead.term)
            stopped = noticed(lambda: lead.stopping.is_set(), 5)
            took = time.monotonic() - ended_at
    assert stopped and took < 1.0, f"stopping set {took:.2f} s after the resignation"
    assert told == [lead] and lead.lost and "term ended" in str(lost.value)


def test_leader_loops_lead_one_at_a_time_with_increasing_terms(es):
    """Three loops (each its own client) take turns: each work holds a moment and returns, which
    resigns; the ledger must never see two believers at once, and terms must grow."""
    name, ledger = unique("election"), Ledger()

    def work(lead):
        ledger.enter(lead.owner, lead.term)
        lead.stopping.wait(0.05)
        ledger.leave(lead.owner)

    loops = [eslm.Locks(es).leader_loop(name, work, lease="5s", round_wait="2s") for _ in range(3)]
    for loop in loops:
        loop.start()
    try:
        wait_until(lambda: ledger.count() >= 9, 30, message="nine leaderships")
    finally:
        assert all(loop.stop(30) for loop in loops)
    assert ledger.overlaps == [] and ledger.term_errors == []
    assert {c for c, _ in ledger.history} == {loop.candidate for loop in loops}
    assert all(loop.error is None for loop in loops)
    assert eslm.Locks(es).election(name)["leader"] is None, "the stopped loops resigned"


def test_a_loop_stops_its_work_within_a_second_of_losing_and_campaigns_again(es, locks):
    """Two loops; the leader's leadership is ended from outside (a resignation with its
    candidate and term: see the module's docstring). Its work, waiting on `lead.stopping`, must
    stop within a second; the other loop leads with a larger term; the first campaigns again."""
    name, ledger = unique("election"), Ledger()
    stopped_at: dict[int, float] = {}

    def work(lead):
        ledger.enter(lead.owner, lead.term)
        lead.stopping.wait(60)  # long work that checks its stop signal
        stopped_at[lead.term] = time.monotonic()
        ledger.leave(lead.owner)

    a = eslm.Locks(es).leader_loop(name, work, lease="60s", round_wait="2s").start()
    b = eslm.Locks(es).leader_loop(name, work, lease="60s", round_wait="2s").start()
    try:
        first = wait_until(lambda: a.leadership or b.leadership, 10, message="a leader")
        loser = a if first is a.leadership else b
        wait_until(lambda: len(locks.election(name)["candidates"]) == 1, 10, message="the other queued")
        ended_at = time.monotonic()
        evict_leader(locks, name, first.owner, first.term)
        wait_until(lambda: first.term in stopped_at, 5, message="the work stopped")
        assert stopped_at[first.term] - ended_at < 1.0, "the work was stopped within a second"
        second = wait_until(lambda: (a.leadership or b.leadership), 10, message="the next leader")
        assert second.owner != first.owner and second.term > first.term
        wait_until(lambda: loser.candidate in locks.election(name)["candidates"], 10,
                   message="the loop that lost campaigns again")
    finally:
        assert a.stop(30) and b.stop(30)
    assert ledger.term_errors == []
    # The server elects the next candidate the moment it ends the leadership; the old leader
    # learns it one round trip later (its term fences its writes meanwhile). So an overlap can
    # only be with the ended term, whose work stopped within the second asserted above.
    assert all(terms == (first.term,) for terms in ledger.overlaps), ledger.overlaps


def test_stopping_a_loop_resigns_and_hands_over(es):
    name = unique("election")
    a = eslm.Locks(es).leader_loop(name, lambda lead: lead.stopping.wait(60), round_wait="2s").start()
    wait_until(lambda: a.leadership, 10, message="a leads")
    b = eslm.Locks(es).leader_loop(name, lambda lead: lead.stopping.wait(60), round_wait="2s").start()
    try:
        wait_until(lambda: eslm.Locks(es).election(name)["candidates"] == [b.candidate], 10, message="b queued")
        first = a.leadership
        assert a.stop(10), "the loop ended with its work"
        assert first.stopping.is_set() and first.released and not first.lost
        handed = wait_until(lambda: b.leadership, 2, message="b elected by a's resignation")
        assert handed.term > first.term
    finally:
        assert b.stop(10)


def test_work_that_fails_while_leading_ends_the_loop_resigned(locks):
    name = unique("election")

    def work(lead):
        raise ValueError(f"bug in term {lead.term}")

    loop = locks.leader_loop(name, work, round_wait="2s").start()  # a thread: a bug cannot hang the test
    wait_until(lambda: loop.error is not None, 10, message="the loop ended with the work's error")
    assert loop.stop(10), "its thread ended"
    assert isinstance(loop.error, ValueError) and "bug in term" in str(loop.error) and len(loop.terms) == 1
    assert locks.election(name)["leader"] is None, "resigned before the error left the loop"


def test_bad_arguments_are_refused_clearly(locks):
    name = unique("election")
    for bad, field in [(dict(name=""), "name"), (dict(name=name, value="x" * 1025), "value"),
                       (dict(name=name, value=5), "value"), (dict(name=name, candidate=""), "candidate"),
                       (dict(name=name, wait="soon"), "wait"), (dict(name=name, lease=-1), "lease")]:
        with pytest.raises(eslm.InvalidArgument, match=rf"\[{field}\]"):
            locks.leadership(**bad)
    with pytest.raises(eslm.InvalidArgument, match=r"\[work\]"):
        locks.leader_loop(name, "not callable")
    with pytest.raises(eslm.InvalidArgument, match=r"\[round_wait\]"):
        locks.leader_loop(name, print, round_wait=0)
    with pytest.raises(eslm.InvalidArgument, match=r"\[term\]"):
        locks.observe(name, -1)
    # refused by the server: a lease past locks.lease.max ends the loop with the 400 at once (a
    # wait past locks.wait.max is not refused: the client sends it in rounds the server takes)
    loop = locks.leader_loop(name, print, lease="1000d").start()
    wait_until(lambda: loop.error is not None, 10, message="the loop ended with the 400")
    assert loop.stop(10), "its thread ended"
    assert isinstance(loop.error, eslm.IllegalArgument) and "lease" in str(loop.error)
    assert loop.error.status == 400 and loop.terms == []


def test_async_loop_cancels_the_work_when_the_leadership_is_lost(es_node):
    async def test(alocks, probe):
        name = unique("election")
        cancelled: list[tuple[int, float]] = []
        leading: list = []

        async def work(lead):
            leading.append(lead)
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append((lead.term, time.monotonic()))
                raise

        loop = alocks.leader_loop(name, work, lease="60s", round_wait="2s")
        runner = asyncio.ensure_future(loop.run())
        assert await until(holds(lambda: leading), 10), "a leader"
        first = leading[0]
        ended_at = time.monotonic()
        await probe.run(force_release(name))
        assert await until(holds(lambda: cancelled), 5), "the work was cancelled"
        assert cancelled[0][0] == first.term and cancelled[0][1] - ended_at < 1.0
        assert await until(holds(lambda: len(leading) == 2), 10), "it campaigned again"
        assert leading[1].term > first.term, "and leads a new term"
        # a second loop queued behind it: stopping it aborts its campaign, and it withdraws
        queued = alocks.leader_loop(name, work, lease="60s", round_wait="20s")
        queued_runner = asyncio.ensure_future(queued.run())

        async def is_queued():
            return (await probe.election(name))["candidates"] == [queued.candidate]
        assert await until(is_queued, 10), "the second loop queued"
        queued.stop()
        await asyncio.wait_for(queued_runner, 10)
        loop.stop()
        await asyncio.wait_for(runner, 10)
        state = await probe.election(name)
        assert (state["leader"], state["candidates"]) == (None, []), "both stopped loops left the election"
        async with alocks.leadership(name, value="v") as lead:
            assert lead.value == "v" and (await probe.observe(name, 0, "1s"))["term"] == lead.term
    run(es_node, test)


def holds(predicate):
    """`predicate` as the awaitable predicate test_client_async.until polls."""
    async def check():
        return bool(predicate())
    return check
