"""The protected-data checker (tests/integration/protected_data.py) on hand-made records and final
documents: each rule passes what it should and catches the violation it is for."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "integration"))

from protected_data import check  # noqa: E402


def rec(kind, op, outcome, token, value="v", doc="d"):
    return {"w": "w0", "doc": doc, "kind": kind, "op": op, "outcome": outcome, "token": token, "value": value}


def fence(token, deleted=False, key="lock-d"):
    return {"token": token, "key": key, **({"deleted": True} if deleted else {})}


def test_a_counter_below_its_acknowledged_increments_lost_one():
    records = [rec("counter", "inc", "ok", 1), rec("counter", "inc", "ok", 2), rec("counter", "inc", "stale", 1)]
    assert check(records, {"d": {"n": 2, "eslm_fence": fence(2)}}).violations == []
    lost = check(records, {"d": {"n": 1, "eslm_fence": fence(2)}}).violations
    assert lost and "1 lost" in lost[0]


def test_a_counter_may_hold_unknown_increments_but_not_more():
    records = [rec("counter", "inc", "ok", 1), rec("counter", "inc", "unknown", 2)]
    assert check(records, {"d": {"n": 2}}).violations == []
    assert check(records, {"d": {"n": 1}}).violations == []
    assert "more than" in check(records, {"d": {"n": 3}}).violations[0]


def test_an_append_acknowledged_is_there_once_and_a_refused_one_not_at_all():
    records = [rec("list", "append", "ok", 1, "a"), rec("list", "append", "stale", 1, "b"),
               rec("list", "append", "unknown", 2, "c")]
    assert check(records, {"d": {"items": ["a", "c"]}}).violations == []
    assert "there 0 times" in check(records, {"d": {"items": ["c"]}}).violations[0]
    assert "there 2 times" in check(records, {"d": {"items": ["a", "a"]}}).violations[0]
    assert "refused append b" in check(records, {"d": {"items": ["a", "b"]}}).violations[0]


def test_a_flag_ends_as_the_change_with_the_largest_token_left_it():
    records = [rec("flag", "create", "ok", 1, "x"), rec("flag", "delete", "ok", 2),
               rec("flag", "create", "stale", 1, "y")]
    assert check(records, {"d": {"eslm_fence": fence(2, deleted=True)}}).violations == []
    assert check(records, {"d": {"eslm_fence": fence(3, deleted=True)}}).violations == [], "a later fenced read"
    revived = check(records, {"d": {"by": "y", "eslm_fence": fence(2)}}).violations
    assert revived and "is what no change" in revived[0]
    below = check(records, {"d": {"by": "x", "eslm_fence": fence(1)}}).violations
    assert below and "below the acknowledged token 2" in below[0]
