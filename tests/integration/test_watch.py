"""Watches on locks over HTTP on a real node (docs/API.md "Watch a lock"):
`GET /_locks/{key}/_watch?token=<t>&wait=<d>` answers as soon as the lock with token `t` ends,
with the reason, within a second of a force-release; `changed: false` when the wait runs out;
at once when the token is not held; 400 naming a missing or bad `token` or `wait`."""

from __future__ import annotations

import threading
import time

import pytest
import requests

from lockclient import assert_error, ok, unique, wait_until


class Watcher:
    """One watch running in a thread: its answer and when it arrived (monotonic seconds)."""

    def __init__(self, locks, key: str, token: int, wait: str = "30s", **params):
        self.response = None
        self.answered_at = None
        self._thread = threading.Thread(target=self._run, args=(locks, key, token, wait, params), daemon=True)
        self._thread.start()

    def _run(self, locks, key, token, wait, params):
        self.response = locks.watch(key, token=token, wait=wait, timeout=60, **params)
        self.answered_at = time.monotonic()

    def result(self, timeout: float = 40.0) -> dict:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the watch did not answer"
        return ok(self.response)


def start_watch(locks, key: str, token: int, **params) -> Watcher:
    """A watch that the node has registered (so what follows happens while it waits)."""
    before = ok(locks.diagnostics())["pending_requests"]
    w = Watcher(locks, key, token, **params)
    deadline = time.monotonic() + 10
    while ok(locks.diagnostics())["pending_requests"] <= before:
        assert w.response is None, f"answered before anything happened: {w.response.text}"
        assert time.monotonic() < deadline, "the watch never registered"
        time.sleep(0.02)
    return w


def held(locks, key: str, owner: str, **fields) -> int:
    return ok(locks.acquire(key, owner, **fields))["fencing_token"]


def test_a_watch_answers_within_one_second_of_a_force_release(locks):
    k = unique("watch-force")
    token = held(locks, k, "w-holder", lease="1m")
    w = start_watch(locks, k, token)
    assert ok(locks.stats())["total"]["watches"] >= 1, "a registered watch is counted"
    released_at = time.monotonic()
    ok(locks.force_release(k))
    body = w.result()
    latency = w.answered_at - released_at
    assert latency < 1.0, f"watch answered {latency:.3f}s after the force-release"
    assert body["changed"] is True and body["reason"] == "force_released", body
    assert body["key"] == k and body["fencing_token"] == token, body


@pytest.mark.parametrize("how", ["released", "expired", "session_ended"])
def test_a_watch_names_why_the_lock_ended(locks, how):
    k, me = unique(f"watch-{how}"), unique("w-owner")
    session = None
    if how == "session_ended":
        session = ok(locks.session_create(me, ttl="1m"))["session"]
        token = held(locks, k, me, session=session)
    else:
        token = held(locks, k, me, lease="1s" if how == "expired" else "1m")
    w = start_watch(locks, k, token)
    if how == "released":
        ok(locks.release(k, me))
    elif how == "session_ended":
        ok(locks.session_delete(session, me))
    body = w.result()
    assert body["changed"] is True and body["reason"] == how, body


def test_an_upgrade_ends_the_watched_token(locks):
    k, me = unique("watch-upgrade"), unique("w-owner")
    token = held(locks, k, me, mode="shared", lease="1m")
    w = start_watch(locks, k, token)
    upgraded = held(locks, k, me, mode="exclusive", lease="1m")
    assert upgraded > token
    assert w.result()["reason"] == "upgraded"
    ok(locks.release(k, me))


def test_a_watch_whose_wait_runs_out_answers_unchanged(locks):
    k, me = unique("watch-timeout"), unique("w-owner")
    token = held(locks, k, me, lease="1m")
    started = time.monotonic()
    body = ok(locks.watch(k, token=token, wait="300ms"))
    assert time.monotonic() - started >= 0.3
    assert body["changed"] is False and body["held"] is True and body["fencing_token"] == token, body
    assert "reason" not in body
    assert locks.holders(k) == [me], "a watch changes nothing"
    ok(locks.release(k, me))


def test_a_token_no_longer_held_answers_at_once(locks):
    k, me = unique("watch-stale"), unique("w-owner")
    token = held(locks, k, me)
    ok(locks.release(k, me))
    started = time.monotonic()
    body = ok(locks.watch(k, token=token, wait="30s"))
    assert time.monotonic() - started < 5
    assert body["changed"] is True and body["reason"] == "not_held", body


def test_a_tree_lock_is_watched_with_scope_tree(locks):
    k, me = "/" + unique("watch-tree") + "/leaf", unique("w-owner")
    token = held(locks, k, me, scope="tree", lease="1m")
    w = start_watch(locks, k, token, scope="tree")
    ok(locks.release(k, me, scope="tree"))
    assert w.result()["reason"] == "released"


@pytest.mark.parametrize("params,name", [
    ({"wait": "1s"}, "token"),
    ({"token": "abc", "wait": "1s"}, "token"),
    ({"token": "0", "wait": "1s"}, "token"),
    ({"token": "5"}, "wait"),
    ({"token": "5", "wait": "soon"}, "wait"),
    ({"token": "5", "wait": "-1s"}, "wait"),
    ({"token": "5", "wait": "2h"}, "wait"),
    ({"token": "5", "wait": "1s", "scope": "branch"}, "scope"),
    ({"token": "5", "wait": "1s", "routing": "r"}, "routing"),
])
def test_bad_parameters_are_400_naming_them(locks, params, name):
    r = locks.call("GET", f"/_locks/{unique('watch-bad')}/_watch", params=params)
    assert_error(r, 400, "illegal_argument_exception", f"[{name}]")


def test_a_client_that_hangs_up_cancels_its_watch(locks):
    k, me = unique("watch-gone"), unique("w-owner")
    token = held(locks, k, me, lease="1m")
    before = ok(locks.diagnostics())["pending_requests"]
    with pytest.raises(requests.exceptions.ReadTimeout):
        locks.watch(k, token=token, wait="1m", timeout=0.5)
    wait_until(lambda: ok(locks.diagnostics())["pending_requests"] <= before, 10,
               message="the watch of the client that hung up was cancelled")
    assert locks.holders(k) == [me], "cancelling a watch changes nothing"
    ok(locks.release(k, me))
