"""The fault test's checker (tests/integration/history.py) on hand-made histories: what it must
flag (two owners holding at once, a token going backwards or reused) and what it must let pass
(holds past their lease, reentrant re-grants, unknown outcomes, grants whose order is unknown).
Pure Python, no Elasticsearch, so not marked slow."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "integration"))

from history import (  # noqa: E402
    ACQUIRE, READ, RELEASE, RENEW, WATCH, History, after_faults, check, grant_order, holds, longest_gap_of_any,
    longest_gaps)

LEASE = 5.0
K = "k"


class Script:
    """Writes a history by hand: the test sets the clock before each event."""

    def __init__(self):
        self.now = 0.0
        self.history = History(clock=lambda: self.now)

    def at(self, t: float) -> "Script":
        self.now = t
        return self

    def acquire(self, owner: str, invoke: float, answer: float, token: int | None, outcome: str = "ok",
                key: str = K, lease: float = LEASE, reentrant: bool = False, acquisition: str | None = None):
        op = self.at(invoke).history.invoke(owner, ACQUIRE, key=key, owner=owner, lease_s=lease,
                                            acquisition=acquisition)
        self.at(answer)
        if outcome == "ok":
            return self.history.ok(op, token=token, status="200", detail="reentrant" if reentrant else None)
        if outcome == "fail":
            return self.history.fail(op, status="409 lock_wait_timeout_exception")
        return self.history.info(op, status="ReadTimeout")

    def release(self, owner: str, invoke: float, answer: float, outcome: str = "ok", key: str = K,
                token: int | None = None):
        op = self.at(invoke).history.invoke(owner, RELEASE, key=key, owner=owner, token=token)
        self.at(answer)
        if outcome == "ok":
            return self.history.ok(op, status="200")
        if outcome == "fail":
            return self.history.fail(op, status="404 lock_not_held_exception")
        return self.history.info(op, status="ReadTimeout")

    def read(self, invoke: float, answer: float, *shown: int):
        """A GET of the key answered with holders of the tokens `shown`."""
        op = self.at(invoke).history.invoke("reader", READ, key=K)
        return self.at(answer).history.ok(op, status="200", shown=list(shown))

    def watch(self, token: int, invoke: float, answer: float, held: bool):
        """A watch of `token` with wait 0s, answered "still held" or "ended"."""
        op = self.at(invoke).history.invoke("reader", WATCH, key=K, token=token)
        return self.at(answer).history.ok(op, status="200", shown=[token] if held else [])

    def fault(self, kind: str, start: float, end: float):
        op = self.at(start).history.invoke("nemesis", kind, node="node-1")
        self.at(end).history.ok(op)

    def check(self, **kwargs):
        return check(self.history, start=0.0, end=self.now, **kwargs)


def rules(report) -> list[str]:
    return [v.rule for v in report.violations]


# --- must pass ------------------------------------------------------------------------------


def test_a_clean_hand_over_passes_and_is_counted():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.release("a", 0.5, 0.6)
    s.acquire("b", 0.2, 0.7, 11)  # queued while a held, granted after a's release
    s.release("b", 1.0, 1.1)
    s.fault("kill", 1.2, 3.0)
    s.at(4.0)
    r = s.check()
    assert r.violations == []
    assert (r.counts["grants"], r.counts["releases"], r.past_lease) == (2, 2, 0)
    assert r.faults == {"kill": 1}
    assert abs(r.gaps[K].seconds - 3.3) < 1e-9  # from b's grant (0.7) to the end (4.0)


def test_a_hold_past_its_lease_may_overlap_the_next_owner_and_is_counted():
    """a's release comes after its lease may have ended: b's grant inside a's hold is the lease
    doing its job, not a violation."""
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.acquire("b", 0.2, LEASE + 0.1, 11)
    s.release("b", LEASE + 0.15, LEASE + 0.2)
    s.release("a", LEASE + 0.5, LEASE + 0.6, outcome="fail")  # 404: it had expired
    r = s.check()
    assert r.violations == []
    assert r.past_lease == 1


def test_a_grant_answered_after_its_lease_ended_proves_nothing():
    """The answer arrived after `invoke + lease` (a frozen coordinator): the lease may already
    have run out on the server, so the hold has no certain part at all."""
    s = Script()
    s.acquire("a", 0.0, LEASE + 1.0, 10)
    s.acquire("b", 1.0, LEASE + 0.5, 11)
    s.release("b", LEASE + 0.8, LEASE + 0.9)
    s.release("a", LEASE + 2.0, LEASE + 2.1, outcome="fail")
    r = s.check()
    assert r.violations == []
    assert (r.unchecked, r.past_lease) == (1, 0)  # b's hold [5.5, 5.8] is checked, a's is not


def test_a_reentrant_re_grant_keeps_its_token():
    """a's release timed out without taking effect; a asks again and gets the same grant back."""
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.release("a", 0.5, 1.5, outcome="info")
    s.acquire("a", 1.6, 1.7, 10, reentrant=True)
    s.release("a", 2.0, 2.1)
    s.acquire("b", 1.0, 2.2, 11)
    s.release("b", 2.5, 2.6)
    r = s.check()
    assert r.violations == []
    assert r.counts["reentrant grants"] == 1


def test_unknown_acquires_are_neither_grants_nor_violations():
    """a's acquire timed out: it may hold the key, so b's grant is no violation, and a's
    unknown grant has no token to compare."""
    s = Script()
    s.acquire("a", 0.0, 3.0, None, outcome="info")
    s.acquire("b", 0.5, 0.6, 11)
    s.release("b", 0.9, 1.0)
    s.acquire("c", 1.1, 1.2, 12)
    s.release("c", 1.3, 1.4)
    r = s.check()
    assert r.violations == []
    assert r.counts["grants"] == 2 and r.counts["unknown acquires"] == 1


def test_concurrent_grants_may_come_back_in_either_order():
    """b was asked for before a's answer came back, so b's smaller token may be the earlier
    grant: no order is known between them."""
    s = Script()
    s.acquire("b", 0.0, 0.3, 10)
    s.acquire("a", 0.05, 0.2, 11)
    s.release("a", 0.25, 0.26)  # a held briefly; b's grant came first, then a's...
    s.release("b", 0.4, 0.5)
    r = s.check()
    # ...which is itself an overlap only if both holds were certain at once: a's certain hold is
    # [0.2, 0.25], b's [0.3, 0.4]: disjoint.
    assert r.violations == []


def test_different_keys_never_conflict():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10, key="x")
    s.acquire("b", 0.0, 0.1, 5, key="y")
    s.release("a", 1.0, 1.1, key="x")
    s.release("b", 1.0, 1.1, key="y")
    assert s.check().violations == []


# --- must be flagged --------------------------------------------------------------------------


def test_two_owners_holding_at_once_is_an_overlap():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.acquire("b", 0.2, 0.3, 11)
    s.release("a", 0.5, 0.6)
    s.release("b", 0.7, 0.8)
    r = s.check()
    assert rules(r) == ["overlap"]
    assert {r.violations[0].first.owner, r.violations[0].second.owner} == {"a", "b"}


def test_an_overlap_inside_the_lease_of_a_hold_released_late_is_still_flagged():
    """a released after its lease, but b was granted well inside a's lease: the lease cannot
    explain that."""
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.acquire("b", 1.0, 1.1, 11)
    s.release("b", 1.5, 1.6)
    s.release("a", LEASE + 1.0, LEASE + 1.1, outcome="fail")
    r = s.check()
    assert rules(r) == ["overlap"]
    assert r.past_lease == 1


def test_an_overlap_with_a_long_hold_behind_a_shorter_one_is_flagged():
    """The sweep must compare a hold with every hold still active, not just the latest."""
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)  # a holds [0.1, 3.0]
    s.acquire("a", 0.2, 0.3, 10, reentrant=True)
    s.acquire("b", 2.0, 2.1, 12)
    s.release("b", 2.2, 2.3)
    s.release("a", 3.0, 3.1)
    assert rules(s.check()) == ["overlap", "overlap"]  # b against both of a's grants


def test_a_token_going_backwards_is_flagged():
    s = Script()
    s.acquire("a", 0.0, 0.1, 1099511636290)
    s.release("a", 0.2, 0.3)
    s.acquire("b", 0.4, 0.5, 1099511627781)  # same epoch, counter restarted
    s.release("b", 0.6, 0.7)
    r = s.check()
    assert rules(r) == ["token"]
    assert "1099511627781" in r.violations[0].why


def test_a_token_reused_by_another_owner_is_flagged():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.release("a", 0.2, 0.3)
    s.acquire("b", 0.4, 0.5, 10)
    s.release("b", 0.6, 0.7)
    assert rules(s.check()) == ["token"]


def test_the_same_token_after_a_certain_release_is_flagged():
    """a released with 200, so its next grant is new and may not carry the old token."""
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.release("a", 0.2, 0.3)
    s.acquire("a", 0.4, 0.5, 10)
    s.release("a", 0.6, 0.7)
    assert rules(s.check()) == ["token"]


def test_a_backwards_token_behind_a_later_smaller_one_is_still_flagged():
    """Tokens 10, 20, 15: 15 comes after 20 was granted, even though 10 < 15."""
    s = Script()
    for i, (owner, token) in enumerate((("a", 10), ("b", 20), ("c", 15))):
        s.acquire(owner, i, i + 0.1, token)
        s.release(owner, i + 0.5, i + 0.6)
    r = s.check()
    assert rules(r) == ["token"]
    assert (r.violations[0].first.token, r.violations[0].second.token) == (20, 15)


def test_gaps_cover_keys_never_granted():
    s = Script()
    s.acquire("a", 0.0, 3.0, None, outcome="fail", key="never")
    r = check(s.history, start=0.0, end=10.0, keys=["never", "silent"])
    assert r.gaps["never"].seconds == 10.0 and r.gaps["silent"].seconds == 10.0


def test_after_a_fault_the_next_grant_counts_only_requests_sent_after_it_started():
    """A grant asked for before the fault (answered during it) says nothing about the fault; the
    first one asked for after it started does. Green is counted from the fault's heal."""
    s = Script()
    s.acquire("a", 0.5, 1.5, 10)        # asked before the fault, answered during it
    s.fault("kill", 1.0, 4.0)
    s.acquire("b", 1.2, 5.0, None, outcome="fail")
    s.acquire("c", 2.0, 6.5, 11)        # the first grant asked for after the fault started
    s.acquire("d", 3.0, 6.0, 12)        # asked later, answered earlier: it counts first
    (after,) = after_faults(s.history.ops(), green_at=[0.9, 3.9, 7.25, 9.0])
    assert (after.kind, after.lasted_s) == ("kill", 3.0)
    assert after.to_grant_s == 5.0, "from 1.0 to d's answer at 6.0"
    assert after.to_green_s == 3.25, "from the heal at 4.0 to green at 7.25"
    s.fault("pause", 8.0, 9.5)
    later = after_faults(s.history.ops(), green_at=[9.0])
    assert (later[1].to_grant_s, later[1].to_green_s) == (None, None), "nothing followed before the end"


def test_after_a_fault_the_bound_counts_from_a_request_waiting_on_a_free_key():
    """No grant can come while every key asked for is held, or while nobody asks for a free one:
    the time until a request asked for after the fault waited on a free key is reported."""
    s = Script()
    s.acquire("a", 0.0, 0.1, 10, key="k1")
    s.release("a", 3.0, 3.6, key="k1")  # answered late (sent through a node cut off until 3.6)
    s.acquire("c", 0.0, 0.1, 20, key="k2")
    s.release("c", 4.0, 4.1, key="k2")
    s.fault("pause", 1.0, 2.0)
    s.acquire("t", 1.2, 1.3, None, outcome="fail", key="k1")  # a try refused while k1 is held
    s.acquire("w", 1.5, 3.7, 11, key="k1", lease=0.1)  # waits for k1, surely free from 3.6
    s.fault("kill", 5.0, 5.5)
    s.acquire("x", 5.5, 5.6, 12, key="k2")  # k2 free when asked
    s.fault("kill", 9.0, 10.0)
    first, second, third = after_faults(s.history.ops(), green_at=[])
    assert abs(first.asked_s - 2.6) < 1e-9, "w waited on k1 from 1.5; k1 surely free once a's release was answered"
    assert second.asked_s == 0.5, "x asked for the free k2 0.5 after the fault started"
    assert third.asked_s is None, "nobody asked after the last fault"
    assert (first.until_next_s, second.until_next_s, third.until_next_s) == (4.0, 4.0, None)


def test_after_a_fault_only_requests_asked_before_the_next_fault_count():
    s = Script()
    s.fault("pause", 1.0, 2.0)
    s.fault("kill", 3.0, 4.0)
    s.acquire("a", 3.5, 5.0, 10, key="k1")  # asked during the next fault: it says nothing of the first
    first, second = after_faults(s.history.ops(), green_at=[])
    assert (first.asked_s, first.to_grant_s) == (None, 4.0)
    assert second.asked_s == 0.5


def test_after_a_fault_requests_through_the_node_it_hit_are_left_out():
    s = Script()
    s.fault("pause", 1.0, 3.0)  # hits node-1
    for owner, node, invoke, answer, token in (("a", "node-1", 1.1, 3.1, 10), ("b", "node-2", 1.5, 1.6, 11)):
        op = s.at(invoke).history.invoke(owner, ACQUIRE, key=owner, owner=owner, lease_s=LEASE, node=node)
        s.at(answer).history.ok(op, token=token, status="200")
    (after,) = after_faults(s.history.ops(), green_at=[])
    assert after.asked_s == 0.5 and abs(after.to_grant_s - 0.6) < 1e-9, "only b, through node-2, counts"


def test_after_a_fault_a_probers_history_shows_the_locks_serving_while_the_shared_keys_are_held():
    """nemesis_run's probers record on a history of their own; their fresh keys beside the
    nemesis's faults give the time to the next grant that no hold can put off."""
    s = Script()
    probes = History(clock=lambda: s.now)
    s.acquire("a", 0.0, 0.1, 10, key="k1")  # held through the fault and past it
    s.fault("pause", 1.0, 4.0)
    s.acquire("w", 1.5, 9.0, 11, key="k1")  # granted only once a's lease ran out
    for invoke, answer, outcome in ((1.2, 1.3, "fail"), (1.5, 2.7, "ok")):
        s.at(invoke)
        op = probes.invoke("p0", ACQUIRE, key=f"probe-{invoke}", owner="p0", lease_s=LEASE)
        s.at(answer)
        if outcome == "ok":
            probes.ok(op, token=1, status="200")
        else:
            probes.fail(op, status="503 unavailable")
    (shared,) = after_faults(s.history.ops(), green_at=[])
    faults = [op for op in s.history.ops() if op.process == "nemesis"]
    (probed,) = after_faults(faults + probes.ops(), green_at=[])
    assert shared.to_grant_s == 8.0, "w's grant waited on a's hold"
    assert abs(probed.to_grant_s - 1.7) < 1e-9 and abs(probed.asked_s - 0.2) < 1e-9, "the fresh key asked at 1.2"


def test_re_entrant_grants_are_no_new_grants_for_gaps_or_faults():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.fault("pause", 1.0, 2.0)
    s.acquire("a", 1.5, 1.6, 10, reentrant=True)  # a's retry: its own grant back
    s.release("a", 3.0, 3.1)
    s.acquire("b", 3.2, 3.3, 11)
    (after,) = after_faults(s.history.ops(), green_at=[])
    assert abs(after.to_grant_s - 2.3) < 1e-9, "b's grant at 3.3, not a's re-entrant one at 1.6"
    assert abs(longest_gaps(s.history.ops(), 0.0, 4.0)[K].seconds - 3.2) < 1e-9, "from 0.1 to 3.3"


def test_gaps_ignore_grants_answered_after_the_window():
    """Workers stop asking at the window's end; a late answer does not shorten the last gap."""
    s = Script()
    s.acquire("a", 0.0, 1.0, 10)
    s.acquire("b", 2.0, 12.0, 11)
    r = check(s.history, start=0.0, end=10.0)
    assert r.gaps[K].seconds == 9.0


def test_a_gap_counts_only_its_time_outside_faults():
    """Grants at 0, 40 and 100: the 60 s stretch holds two faults (10 s and 30 s, overlapping by
    5 s, so 35 s of faults), leaving 25 s; the 40 s stretch holds none and is the longest."""
    s = Script()
    for i, t in enumerate((0.0, 40.0, 100.0)):
        s.acquire(f"o{i}", t - 0.1 if t else 0.0, t, 10 + i)
        s.release(f"o{i}", t + 0.1, t + 0.2)
    ops = s.history.ops()
    faults = [(50.0, 60.0), (55.0, 85.0), (200.0, 210.0)]
    gap = longest_gaps(ops, 0.0, 100.0, faults=faults)[K]
    assert (gap.seconds, gap.start, gap.end) == (40.0, 0.0, 40.0)
    raw = longest_gaps(ops, 0.0, 100.0)[K]
    assert (raw.seconds, raw.start) == (60.0, 40.0), "without faults the raw stretch is the longest"
    covered = longest_gaps(ops, 40.0, 100.0, faults=[(40.0, 90.0), (60.0, 70.0)])[K]
    assert covered.seconds == 10.0, "a fault inside another counts once"


def test_the_longest_gap_of_any_key_runs_between_grants_of_different_keys():
    """Fresh keys granted at 1, 2 (re-entrant: no new grant), 3 and 9: the longest stretch without
    a new grant of any of them is 3 to 9."""
    s = Script()
    s.acquire("a", 0.5, 1.0, 10, key="p-1")
    s.acquire("a", 1.5, 2.0, 10, key="p-1", reentrant=True)
    s.acquire("b", 2.5, 3.0, 11, key="p-2")
    s.acquire("c", 8.5, 9.0, 12, key="p-3")
    gap = longest_gap_of_any(s.history.ops(), 0.0, 10.0)
    assert (gap.seconds, gap.start, gap.end) == (6.0, 3.0, 9.0)


def test_the_summary_names_the_figures():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.acquire("b", 0.2, 0.3, 11)
    s.release("a", 0.5, 0.6)
    s.release("b", 0.7, 0.8)
    s.fault("pause", 0.0, 0.4)
    text = s.check().summary()
    for needle in ("violations: 1", "faults: 1 {'pause': 1}", "grants: 2", "past-lease holds: 0", "unchecked grants",
                   "longest gap without a grant on k", "overlap on k"):
        assert needle in text, text


# --- renewals and grant order (elections, tests/integration/test_elections_cluster.py) --------


def renew(s: Script, owner: str, invoke: float, answer: float, token: int, lease: float = LEASE):
    op = s.at(invoke).history.invoke(owner, RENEW, key=K, owner=owner, lease_s=lease)
    return s.at(answer).history.ok(op, token=token, status="200")


def test_a_renew_answered_200_extends_the_certain_hold():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10, lease=1.0)
    renew(s, "a", 0.8, 0.9, 10, lease=1.0)
    s.acquire("b", 0.2, 1.5, 11)  # inside a's renewed lease (until 1.8): an overlap
    assert rules(s.check()) == ["overlap"]
    assert s.check().counts["renews"] == 1


def test_a_renew_of_another_token_extends_nothing():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10, lease=1.0)
    renew(s, "a", 0.8, 0.9, 9, lease=1.0)
    s.acquire("b", 0.2, 1.5, 11)
    assert rules(s.check()) == []


def test_terms_must_rise_in_the_order_grants_were_answered():
    s = Script()
    s.acquire("a", 0.0, 0.1, 12)
    s.release("a", 0.5, 0.6)
    s.acquire("b", 0.05, 0.7, 11)  # queued beside a: token_order cannot order them
    s.release("b", 1.0, 1.1)
    assert rules(s.check()) == []
    assert [v.rule for v in grant_order(holds(s.history.ops()))] == ["grant order"]


def refused_renew(s: Script, owner: str, invoke: float, answer: float, token: int, lease: float = LEASE):
    op = s.at(invoke).history.invoke(owner, RENEW, key=K, owner=owner, token=token, lease_s=lease)
    s.at(answer).history.fail(op, status="404 lock_not_held_exception")
    return op


def test_a_renewal_refused_while_its_lease_ran_is_a_lost_holder():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10, lease=1.0)
    renew(s, "a", 0.8, 0.9, 10, lease=1.0)
    refused_renew(s, "a", 1.5, 1.6, 10, lease=1.0)  # the renewed lease runs until 1.8
    assert rules(s.check()) == ["lost renewal"]


def test_a_renewal_refused_after_its_lease_may_have_ended_is_no_violation():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10, lease=1.0)
    renew(s, "a", 0.8, 0.9, 10, lease=1.0)
    refused_renew(s, "a", 1.9, 2.0, 10, lease=1.0)  # after 1.8: the lease may rightly be gone
    refused_renew(s, "a", 1.7, 1.9, 10, lease=1.0)  # answered after 1.8: decided maybe after it too
    refused_renew(s, "b", 0.5, 0.6, 99, lease=1.0)  # a grant nobody saw answered: nothing certain
    assert rules(s.check()) == []


# --- reads, watches and re-entrant retries (the nemesis's readers) ----------------------------


def test_reads_that_agree_with_the_history_pass():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10, acquisition="a#1")
    s.read(0.05, 0.2, 10)  # sent before the grant was answered: may show it or not
    s.read(0.06, 0.2)
    s.read(0.3, 0.4, 10)
    s.watch(10, 0.3, 0.4, held=True)
    s.acquire("a", 0.5, 0.6, 10, reentrant=True, acquisition="a#1")  # a retry gets its grant back
    s.release("a", 1.0, 1.1, token=10)
    s.read(1.05, 1.2, 10)  # sent before the release was answered
    s.read(1.2, 1.3)
    s.watch(10, 1.2, 1.3, held=False)
    s.acquire("b", 0.9, 1.4, 11)
    s.read(1.15, 1.6, 11)  # sent before b's grant was answered: may show it
    r = s.check()
    assert r.violations == []
    assert (r.counts["reads"], r.counts["watches"], r.counts["re-entrant retries"]) == (6, 2, 1)


def test_a_read_of_a_token_older_than_an_answered_grant_is_stale():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.release("a", 0.5, 1.0, outcome="info")
    s.acquire("b", 0.2, 1.2, 11)
    s.read(1.3, 1.4, 10)  # the old owner answering from its table
    assert rules(s.check()) == ["stale read", "lost holder"]  # and b's certain hold is not shown


def test_a_read_or_watch_of_a_released_token_is_stale():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10)
    s.release("a", 0.5, 0.6, token=10)
    s.read(0.7, 0.8, 10)
    s.watch(10, 0.7, 0.8, held=True)
    assert rules(s.check()) == ["stale read", "stale read"]


def test_a_read_or_watch_missing_a_certain_hold_is_a_lost_holder():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10, lease=1.0)
    s.read(0.2, 0.3)
    s.watch(10, 0.4, 0.5, held=False)
    s.watch(10, 0.95, 1.05, held=False)  # answered after the lease may have ended: no violation
    s.read(0.4, 0.5, 9)  # an older token, and not a's
    assert rules(s.check()) == ["lost holder", "lost holder", "stale read", "lost holder"]


def test_a_re_entrant_retry_answered_with_another_token_is_a_lost_holder():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10, lease=1.0, acquisition="a#1")
    s.acquire("a", 0.2, 0.3, 12, lease=0.5, acquisition="a#1")
    s.acquire("a", 0.95, 1.05, 13, acquisition="a#1")  # a's lease may have ended: a new grant is right
    assert rules(s.check()) == ["lost holder"]


def test_a_retry_of_a_grant_held_while_plugins_were_mixed_may_be_a_new_acquisition():
    s = Script()
    s.acquire("a", 0.0, 0.1, 10, lease=1.0, acquisition="a#1")
    s.acquire("a", 0.2, 0.3, 12, lease=1.0, acquisition="a#1")  # a failover kept no id: a new grant
    assert rules(s.check(ids_unkept=[(0.15, 0.25)])) == []
    assert rules(s.check(ids_unkept=[(2.0, 3.0)])) == ["lost holder"]
