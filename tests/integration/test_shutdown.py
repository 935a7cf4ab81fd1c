"""A node stops promptly (docs/RELIABILITY.md "Stopping a node"). Elasticsearch stops a node's
HTTP server first on SIGTERM and waits (by default without limit) for every open HTTP request
before it closes anything else, so a queued acquire with a 5-minute wait used to hold the node up
for 5 minutes. Now, when the shutdown begins, the node answers every lock request it holds open
with a retryable 503 naming itself, and closes its partitions for their next owners.

Three real nodes (scripts/node.py) and HTTP only: a lock held with a long lease, a second owner's
acquire queued for 5 minutes through the partition's owner (so the waiter sits on that node) and
a watch of the held lock through it too; SIGTERM that node. The process exits within 10 s, both
requests are answered 503 `lock_partition_unavailable_exception` naming the node, the holder keeps
its lock and token on the remaining nodes, and the waiter, sent again through another node as a
client does, is granted once the holder releases."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from cluster_kit import ThreeNodes, live, owner_of_partition, settled
from lockclient import LockClient, ok, unique, wait_until

# The signal reaches the plugin differently on 8.19 and 9.x (docs/RELIABILITY.md "Stopping a node").
pytestmark = [pytest.mark.slow, pytest.mark.every_version]

# The bound: a node with a waiter stops within 10 s of SIGTERM.
EXIT_WITHIN_S = 10.0


THREE_NODES = ThreeNodes("eslm-it-shutdown", {"locks.partitions": 1, "cluster.routing.rebalance.enable": "none"})


def answered_in_background(fn):
    """Runs `fn` (an HTTP call) in a thread; the dict it returns gets `response` (or `error`) and
    `at` (time.monotonic() of the answer)."""
    out = {}

    def run():
        try:
            out["response"] = fn()
        except Exception as e:  # noqa: BLE001 - asserted by the test
            out["error"] = f"{type(e).__name__}: {e}"
        out["at"] = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    out["thread"] = thread
    return out


def shutdown_503(answer, node_name):
    """Asserts `answer` is the 503 of a node that is shutting down, the one clients retry."""
    assert "response" in answer, answer.get("error")
    r = answer["response"]
    assert r.status_code == 503, r.text
    error = r.json()["error"]
    assert error["type"] == "lock_partition_unavailable_exception", error
    assert error["node_shutting_down"] == node_name, error
    assert f"node [{node_name}] is shutting down" in error["reason"], error


def test_sigterm_answers_waiters_503_and_the_node_exits_promptly(cluster):
    settled(cluster.nodes[0])
    owner, epoch = owner_of_partition(cluster, 0)
    others = [n for n in live(cluster) if n is not owner]
    k = unique("shutdown")

    # A holder with a long lease, taken through another node.
    holder = ok(LockClient(others[0].url).acquire(k, "holder", lease="5m"))
    token = holder["fencing_token"]

    # Through the owner: a 5-minute waiter and a 5-minute watch of the held lock; both wait on
    # the owner itself (it is the partition's owner and their coordinator).
    through_owner = LockClient(owner.url, timeout=330)
    waiter = answered_in_background(lambda: through_owner.acquire(k, "waiter", wait="5m", lease="1m"))
    watcher = answered_in_background(
        lambda: LockClient(owner.url, timeout=330).watch(k, token=token, wait="5m"))
    wait_until(lambda: ok(LockClient(owner.url).diagnostics())["pending_requests"] >= 2, 30,
               message="the waiter and the watch queued on the owner")
    waiters = ok(LockClient(owner.url).get(k))["waiters"]
    assert [w["owner"] for w in waiters] == ["waiter"], waiters

    # SIGTERM to the node (its launcher, as systemd or `kill` sends it), timed to the exit.
    sent = time.monotonic()
    owner.process.send_signal(signal.SIGTERM)
    try:
        code = owner.process.wait(timeout=120)
    except Exception:
        owner.kill()
        raise
    exited_after = time.monotonic() - sent
    print(f"\n{owner.name}: SIGTERM to exit {exited_after:.2f}s (exit code {code})")
    assert code in (0, 143), owner.tail_log()
    assert exited_after < EXIT_WITHIN_S, f"node took {exited_after:.1f}s to exit:\n{owner.tail_log(80)}"
    assert owner.server_pid() is None or not _alive(owner.server_pid()), "the server JVM outlived its launcher"

    # Both open requests were answered at once with the retryable 503 naming the node.
    for answer in (waiter, watcher):
        answer["thread"].join(10)
        assert not answer["thread"].is_alive(), "request still open after the node exited"
        shutdown_503(answer, owner.name)
        assert answer["at"] - sent < EXIT_WITHIN_S

    # The client sends its acquire again through another node, with the wait it has left.
    via = LockClient(others[1].url, timeout=330)
    resent = answered_in_background(lambda: via.acquire(k, "waiter", wait="4m", lease="1m"))

    # A replica took the partition over with the holder and its token.
    new_owner, new_epoch = owner_of_partition(cluster, 0)
    assert new_owner is not owner and new_epoch > epoch
    holders = ok(LockClient(others[0].url).get(k))["holders"]
    assert [(h["owner"], h["fencing_token"]) for h in holders] == [("holder", token)], holders
    wait_until(lambda: [w["owner"] for w in ok(LockClient(new_owner.url).get(k))["waiters"]] == ["waiter"],
               60, message="the re-sent waiter queued at the new owner")
    assert resent["thread"].is_alive(), resent

    # The holder releases (with its token: the same grant); the waiter is granted.
    ok(LockClient(others[0].url).release(k, "holder", fencing_token=token))
    resent["thread"].join(30)
    assert not resent["thread"].is_alive(), "the re-sent waiter was not granted"
    granted = ok(resent["response"])
    assert granted["acquired"] is True and granted["owner"] == "waiter", granted
    assert granted["fencing_token"] > token
    ok(via.release(k, "waiter", fencing_token=granted["fencing_token"]))


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False
