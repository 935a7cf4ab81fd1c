"""Preemption with notice on a real node over HTTP (docs/API.md "Preemption"): a foreground
waiter that asks to preempt makes a background holder's notice watch answer `revoke_requested`
with the grace, the holder keeps its lock (and renews) through the grace, and when the grace ends
the lock is taken away and the waiter granted with a larger token; the preempted holder's renewal
answers 404 saying it was preempted; a holder that yields in time is not preempted; one of equal
priority is not asked; bad requests are 400 naming the field. The privilege is in
test_security.py."""

from __future__ import annotations

import threading
import time

import pytest

from lockclient import LockClient, assert_error, ok, unique, wait_until


def watch(locks, key, token, revoke, wait="20s"):
    params = {"token": token, "wait": wait, "revoke": "true" if revoke else "false"}
    return ok(locks.call("GET", f"/_locks/{key}/_watch", params=params, timeout=30))


def watches(locks) -> int:
    return ok(locks.call("GET", "/_locks/_stats"))["total"]["watches"]


def in_thread(fn):
    """Runs `fn` in a thread; its answer (or exception) lands in the returned dict."""
    out: dict = {}

    def run():
        try:
            out["answer"] = fn()
        except Exception as e:  # noqa: BLE001 - handed to the test
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    out["thread"] = t
    return out


def test_a_background_holder_that_ignores_the_notice_is_preempted_when_its_grace_ends(locks, single_node):
    key, batch, ui = unique(), unique("batch"), unique("ui")
    held = ok(locks.acquire(key, batch, priority="background", lease="60s"))
    before = watches(locks)
    notice = in_thread(lambda: watch(LockClient(single_node.url), key, held["fencing_token"], True))
    end = in_thread(lambda: watch(LockClient(single_node.url), key, held["fencing_token"], False, "30s"))
    wait_until(lambda: watches(locks) >= before + 2, 10, message="both watches registered")
    # Read before the preempting acquire is sent: its grace starts no earlier, so the grant comes
    # no earlier than this plus the grace, however slowly the answers travel.
    asked_at = time.monotonic()
    waiter = in_thread(lambda: ok(LockClient(single_node.url).acquire(
        key, ui, wait="20s", preempt="2s", timeout=30)))
    notice["thread"].join(10)
    told = notice["answer"]
    assert (told["reason"], told["changed"], told["held"]) == ("revoke_requested", False, True), told
    assert 0 < told["grace_ms"] <= 2000, told
    ok(locks.renew(key, batch, fencing_token=held["fencing_token"], lease="60s"))
    waiter["thread"].join(20)
    granted = waiter["answer"]
    assert time.monotonic() - asked_at >= 2.0 - 0.05, "granted before the grace ended"
    assert granted["owner"] == ui and granted["fencing_token"] > held["fencing_token"], granted
    end["thread"].join(10)
    assert (end["answer"]["reason"], end["answer"]["changed"]) == ("preempted", True), end["answer"]
    err = assert_error(locks.renew(key, batch, fencing_token=held["fencing_token"]), 404,
                       "lock_not_held_exception")
    assert err["ended"] == "preempted" and "preempted" in err["reason"], err
    stats = ok(locks.call("GET", "/_locks/_stats"))
    assert stats["total"]["preemptions"] >= 1 and stats["total"]["revokes_requested"] >= 1, stats["total"]
    ok(locks.release(key, ui))


def test_a_holder_that_yields_within_its_grace_is_not_preempted(locks, single_node):
    key, batch, ui = unique(), unique("batch"), unique("ui")
    held = ok(locks.acquire(key, batch, priority="background", lease="60s"))
    waiter = in_thread(lambda: ok(LockClient(single_node.url).acquire(
        key, ui, wait="20s", preempt="10s", timeout=30)))
    told = watch(locks, key, held["fencing_token"], True)
    assert told["reason"] == "revoke_requested", told
    ok(locks.release(key, batch, fencing_token=held["fencing_token"]))
    waiter["thread"].join(10)
    assert waiter["answer"]["owner"] == ui, waiter
    assert_error(locks.renew(key, batch), 404, "lock_not_held_exception")
    ok(locks.release(key, ui))


def test_a_holder_of_equal_priority_is_not_asked(locks):
    key, a, b = unique(), unique("a"), unique("b")
    held = ok(locks.acquire(key, a, lease="60s"))
    assert_error(locks.acquire(key, b, wait="1s", preempt="200ms"), 409, "lock_wait_timeout_exception")
    assert watch(locks, key, held["fencing_token"], True, "0s")["held"] is True
    ok(locks.release(key, a))


@pytest.mark.parametrize("body, field", [
    ({"owner": "o", "preempt": "1s"}, "preempt"),
    ({"owner": "o", "wait": "1s", "preempt": "soon"}, "preempt"),
    ({"owner": "o", "wait": "1s", "preempt": "1h"}, "preempt"),
])
def test_bad_preemptions_are_400_naming_the_field(locks, body, field):
    r = locks.call("POST", f"/_locks/{unique()}/_acquire", body)
    assert r.status_code == 400, r.text
    assert field in r.text, r.text


def test_a_bad_revoke_parameter_is_400(locks):
    key = unique()
    held = ok(locks.acquire(key, "o"))
    r = locks.call("GET", f"/_locks/{key}/_watch", params={"token": held["fencing_token"], "wait": "0s",
                                                          "revoke": "maybe"})
    assert r.status_code == 400 and "revoke" in r.text, r.text
    ok(locks.release(key, "o"))
