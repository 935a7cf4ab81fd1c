"""The state log on a real node (docs/ARCHITECTURE.md "The state log", docs/RELIABILITY.md "A
damaged state log"): a single node with `.locks` on zero replicas, so the log in its shard folder
is the only copy of the lock table. What a crash leaves (a torn last append) is cut off and never
costs an acknowledged holder; a damaged byte before the tail makes the node refuse the partition
with a reason naming the file, never serve a partial table; kill -9 while grants stream in keeps
every grant that was answered."""

from __future__ import annotations

import threading

import pytest
import requests

from cluster_kit import OneNode
from lockclient import LockClient, assert_error, ok, unique, wait_until
from state_log import append_torn, flip_byte, log_file, payload, records

pytestmark = [pytest.mark.slow, pytest.mark.every_version]

# Leases are long: a holder lost by a restart must show as a second owner, never as an expiry.
LEASE = "10m"


ONE_NODE = OneNode("eslm-it-statelog")  # each test breaks its node: `fresh_node`, one per test


def restart(node, ready=True):
    assert node.stop() in (0, 143), node.tail_log()
    node.start()
    if ready:
        node.wait_until_ready()


def holder(lc, key):
    return [(h["owner"], h["fencing_token"]) for h in lc.state(key)["holders"]]


def test_a_torn_tail_is_cut_off_and_the_next_grant_survives_a_restart(fresh_node):
    lc = LockClient(fresh_node.url)
    a = ok(lc.acquire("torn-a", "A", lease=LEASE))
    assert fresh_node.stop() in (0, 143), fresh_node.tail_log()
    log = log_file(fresh_node)
    whole = len(log.read_bytes())
    torn = append_torn(log)

    fresh_node.start()
    fresh_node.wait_until_ready()
    assert len(log.read_bytes()) >= whole, "nothing acknowledged was cut"
    lc = LockClient(fresh_node.url)
    b = ok(lc.acquire("torn-b", "B", lease=LEASE))
    restart(fresh_node)

    lc = LockClient(fresh_node.url)
    assert holder(lc, "torn-a") == [("A", a["fencing_token"])]
    assert holder(lc, "torn-b") == [("B", b["fencing_token"])], "B's grant was appended after the torn bytes"
    assert_error(lc.acquire("torn-b", "C"), 409, "lock_conflict_exception", "B")
    log_text = fresh_node.log_file.read_text(errors="replace")
    assert f"cut off a torn tail of {torn} bytes" in log_text


def test_a_damaged_byte_refuses_the_partition_until_an_operator_accepts_the_loss(fresh_node):
    lc = LockClient(fresh_node.url)
    held = {k: ok(lc.acquire(k, "A", lease=LEASE))["fencing_token"] for k in ("dmg-1", "dmg-2", "dmg-3")}
    assert fresh_node.stop() in (0, 143), fresh_node.tail_log()
    log = log_file(fresh_node)
    first = records(log)[0]
    assert payload(log, first).startswith('{"full"'), "the log starts with a whole state"
    flip_byte(log, first[0] + 20)  # inside the first record's payload: not a torn tail

    fresh_node.wait_for_locks = False  # the lock index stays red: no copy of it can be used
    fresh_node.start()
    fresh_node.wait_until_ready(status="red")
    lc = LockClient(fresh_node.url)

    def refused():
        r = lc.acquire("dmg-1", "C")
        assert r.status_code != 200, f"a second holder was granted from a damaged log: {r.text}"
        return [r] if r.status_code == 503 and "accept_data_loss" in r.text else None  # a 503 is falsy

    (r,) = wait_until(refused, 120, interval=0.5, message="a 503 naming the damaged log")
    err = assert_error(r, 503, "lock_partition_unavailable_exception", str(log), "allocate_empty_primary")
    assert "checksum" in err["reason"], err
    for call in (lambda: lc.get("dmg-2"), lambda: lc.renew("dmg-2", "A"), lambda: lc.acquire("dmg-3", "C")):
        assert_error(call(), 503, "lock_partition_unavailable_exception", "accept_data_loss")
    assert "lock state log" in fresh_node.log_file.read_text(errors="replace")

    # The explicit, logged action that accepts losing the partition's locks.
    r = requests.post(f"{fresh_node.url}/_cluster/reroute", json={"commands": [{"allocate_empty_primary": {
        "index": ".locks", "shard": 0, "node": fresh_node.name, "accept_data_loss": True}}]}, timeout=30)
    assert r.status_code == 200, r.text
    fresh_node.get("/_cluster/health/.locks?wait_for_status=yellow&timeout=60s", timeout=70)
    parts = wait_until(lambda: ok(lc.diagnostics())["core"]["partitions"], 60, interval=0.2,
                       message="the partition reopened")
    assert [p["state"] for p in parts] == ["grace"], "empty, and in grace: the lost leases may still run"
    r = lc.acquire("dmg-1", "C")
    assert_error(r, 503, "lock_partition_unavailable_exception")
    assert max(held.values()) >> 40 < parts[0]["epoch"], "tokens after the loss carry a higher term"


def test_kill_9_while_grants_stream_in_keeps_every_answered_grant(fresh_node):
    granted: dict[str, tuple[str, int]] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def worker(i):
        lc = LockClient(fresh_node.url, timeout=10)
        n = 0
        while not stop.is_set():
            key, owner = f"k9-{i}-{n}", f"w{i}"
            n += 1
            try:
                r = lc.acquire(key, owner, lease=LEASE)
            except requests.RequestException:
                continue  # outcome unknown: not counted either way
            if r.status_code == 200:
                with lock:
                    granted[key] = (owner, r.json()["fencing_token"])

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(4)]
    for t in threads:
        t.start()
    wait_until(lambda: len(granted) >= 200, 60, interval=0.05, message="200 grants before the kill")
    fresh_node.kill()
    stop.set()
    for t in threads:
        t.join(30)
    answered = dict(granted)

    fresh_node.start()
    fresh_node.wait_until_ready()
    lc = LockClient(fresh_node.url)
    listed = {}
    after = None
    while True:
        page = ok(lc.list(prefix="k9-", size=1000, **({"after": after} if after else {})))
        listed.update({l["key"]: (l["owner"], l["fencing_token"]) for l in page["locks"]})
        after = page.get("next")
        if not after:
            break
    lost = {k: v for k, v in answered.items() if listed.get(k) != v}
    assert not lost, f"{len(lost)} of {len(answered)} answered grants lost by kill -9: {list(lost.items())[:5]}"
    newer = ok(lc.acquire(unique("k9-after"), "after"))["fencing_token"]
    assert newer > max(t for _, t in answered.values())
