"""A single node with `.locks` on zero replicas (what `make run` starts), restarted: the
partition's batches persisted in its shard folder bring every holder back with its token and
its lease counted from the restart, a session with its locks too, and the next token is larger
than every token before (docs/ARCHITECTURE.md "Replication", "Durability modes")."""

from __future__ import annotations

import re

import pytest

from lockclient import LockClient, duration_ms, ok, wait_until

pytestmark = pytest.mark.every_version  # also on 8.19 (Makefile integration-test)


def test_a_restarted_node_brings_back_holders_sessions_and_larger_tokens(restart_node):
    lc = LockClient(restart_node.url)
    held = ok(lc.acquire("restart-held", "worker-1", lease="10m"))
    session = ok(lc.call("POST", "/_locks/_session", {"owner": "worker-2", "ttl": "10m"}))["session"]
    in_session = ok(lc.call("POST", "/_locks/restart-session/_acquire", {"owner": "worker-2", "acquisition": "worker-2", "session": session}))
    counted = ok(lc.acquire("restart-counted", "worker-3"))
    ok(lc.release("restart-counted", "worker-3"))
    issued = max(held["fencing_token"], in_session["fencing_token"], counted["fencing_token"])

    assert restart_node.stop() in (0, 143), restart_node.tail_log()
    restart_node.start()
    restart_node.wait_until_ready()
    restart_node.get("/_cluster/health/.locks?wait_for_status=green&timeout=60s", timeout=70)

    lc = LockClient(restart_node.url)
    for key, owner, token in (("restart-held", "worker-1", held["fencing_token"]),
                              ("restart-session", "worker-2", in_session["fencing_token"])):
        holders = lc.state(key)["holders"]
        assert [(h["owner"], h["fencing_token"]) for h in holders] == [(owner, token)], holders
        assert holders[0]["lease_ms"] > 9 * 60_000, "the lease counts from the restart"
    assert re.fullmatch(r"0_[0-9a-f]{32}", session), session
    intruder = lc.session_keepalive(session, "worker-1")
    assert (intruder.status_code, intruder.json()["error"]["type"]) == (404, "session_not_found_exception")
    assert ok(lc.session_keepalive(session, "worker-2"))["session"] == session, "the same id after the restart"
    ok(lc.renew("restart-held", "worker-1"))
    after = ok(lc.acquire("restart-counted", "worker-3"))
    assert after["fencing_token"] > issued
    diag = ok(lc.diagnostics())["core"]["partitions"]
    assert [p["state"] for p in diag] == ["active"], "no grace: the state was restored"
    ok(lc.session_delete(session, "worker-2"))
    assert lc.state("restart-session")["holders"] == []


def test_a_restarted_node_still_covers_a_lease_granted_under_a_lowered_maximum(restart_node):
    """`locks.lease.max` raised to 40m, then lowered again: a lease granted meanwhile may run 40
    minutes, so the node records the maximum (`locks.recovery.longest_lease`) and, restarted
    after the lowering (it never saw 40m itself then), its recovery grace still covers it."""
    lc = LockClient(restart_node.url)
    ok(lc.put_cluster_settings({"locks.lease.max": "40m"}))
    try:
        def recorded():
            persistent = ok(lc.call("GET", "/_cluster/settings?flat_settings=true"))["persistent"]
            return persistent.get("locks.recovery.longest_lease")
        assert wait_until(recorded, 30, interval=0.1, message="the longest lease recorded") == "40m"
    finally:
        ok(lc.put_cluster_settings({"locks.lease.max": None}))

    assert restart_node.stop() in (0, 143), restart_node.tail_log()
    restart_node.start()
    restart_node.wait_until_ready()
    diag = ok(LockClient(restart_node.url).diagnostics())
    assert diag["settings"]["locks.lease.max"] == "10m"
    assert duration_ms(diag["settings"]["locks.recovery.grace"]) == 40 * 60_000 + 30_000
