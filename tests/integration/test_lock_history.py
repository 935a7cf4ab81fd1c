"""Issue 30 item 2, the lock history: with `locks.audit.enabled` turned on (a dynamic cluster
setting), what happens to locks becomes searchable in the data stream `locks-history` within
seconds, with the fields docs/API.md "Lock history" lists (the Elastic Common Schema's where one
fits, issue 50 item 4); with a tiny buffer, records are dropped and counted in `_locks/_stats`,
and every recorded one still arrives. The `@custom` template, the older shape's rollover and the
dashboard's queries: test_history_stack.py.

One node of this module's own. Waits are bounded polls (`wait_until`), never fixed sleeps.
"""

from __future__ import annotations

import threading

from cluster_kit import OneNode
from lockclient import LockClient, ok, unique, wait_for_waiter, wait_until

STREAM = "locks-history"


ONE_NODE = OneNode("eslm-it-history")


def node_stats(lc: LockClient) -> dict:
    nodes = ok(lc.stats())["nodes"]
    return next(iter(nodes.values()))["locks"]


def history_of(lc: LockClient, prefix: str) -> list[dict]:
    """The history documents of the keys starting with `prefix`, oldest first ([] while the
    data stream does not exist yet, or its first shard is still starting)."""
    r = lc.call("POST", f"/{STREAM}/_search", {
        "size": 100,
        "query": {"prefix": {"lock.key": prefix}},
        "sort": [{"@timestamp": "asc"}],
    })
    if r.status_code in (404, 503):
        return []
    return [h["_source"] for h in ok(r)["hits"]["hits"]]


def action(d: dict) -> tuple[str, str]:
    """What happened to whom: (`event.action`, `lock.owner`)."""
    return d["event"]["action"], d["lock"]["owner"]


NANOS = 1_000_000  # ECS durations are nanoseconds; the lock answers say milliseconds


def settings(lc: LockClient, **values) -> None:
    ok(lc.put_cluster_settings({f"locks.audit.{k}": v for k, v in values.items()}))


def test_the_history_is_off_until_enabled_and_then_searchable_within_seconds(lc, own_node):
    p = unique("hist")
    ok(lc.acquire(f"{p}-before", "a"))
    ok(lc.release(f"{p}-before", "a"))
    assert node_stats(lc)["audit_recorded"] == 0, "off by default: nothing recorded"

    settings(lc, enabled=True, retention="3d")
    try:
        grant = ok(lc.acquire(f"{p}-k1", "a"))
        # A waiter granted after a wait.
        answers = {}
        waiter = threading.Thread(
            target=lambda: answers.update(b=lc.acquire(f"{p}-k1", "b", wait="30s", timeout=40)))
        waiter.start()
        wait_for_waiter(lc, f"{p}-k1", "b")
        ok(lc.release(f"{p}-k1", "a"))
        waiter.join(40)
        b = ok(answers["b"])
        ok(lc.release(f"{p}-k1", "b"))
        # An expiry: the node's tick takes the lock when its lease ends.
        expiring = ok(lc.acquire(f"{p}-k2", "c", lease="1s"))
        # A force-release with the administrator's reason, then the old holder's renewal refused.
        forced = ok(lc.acquire(f"{p}-k3", "d"))
        ok(lc.force_release(f"{p}-k3", reason="stuck job"))
        assert lc.renew(f"{p}-k3", "d", fencing_token=forced["fencing_token"]).status_code == 404
        # A preemption: a background holder that does not yield within the grace loses the lock.
        ok(lc.acquire(f"{p}-k4", "e", priority="background", lease="30s"))
        preempting = threading.Thread(target=lambda: answers.update(g=lc.acquire(
            f"{p}-k4", "g", priority="foreground", wait="20s", preempt="500ms", timeout=30)))
        preempting.start()
        preempting.join(30)
        ok(answers["g"])

        want = {("granted", "a"), ("granted", "b"), ("released", "a"), ("released", "b"),
                ("granted", "c"), ("expired", "c"), ("granted", "d"), ("force_released", "d"),
                ("renew_refused", "d"), ("granted", "e"), ("preempted", "e"), ("granted", "g")}

        def arrived():
            docs = history_of(lc, p)
            return docs if want <= {action(d) for d in docs} else None

        docs = wait_until(arrived, 30, interval=0.25, message="the history searchable")
    finally:
        settings(lc, enabled=None, retention=None)

    def one(event, owner):
        found = [d for d in docs if action(d) == (event, owner)]
        assert len(found) == 1, (event, owner, docs)
        return found[0]

    assert not [d for d in docs if d["lock"]["key"] == f"{p}-before"], "nothing from before it was on"
    node_name = ok(lc.diagnostics())["node"]["name"]
    g = one("granted", "a")
    lock = g["lock"]
    assert (lock["key"], lock["scope"], lock["mode"], lock["fencing_token"], g["service"]["node"]["name"]) == (
        f"{p}-k1", "key", "exclusive", grant["fencing_token"], node_name), g
    assert g["event"] == {"kind": "event", "module": "locks", "dataset": "locks.history", "action": "granted"}, g
    assert isinstance(g["@timestamp"], int) and "wait" not in lock and g["ecs"]["version"], g
    gb = one("granted", "b")
    assert gb["lock"]["fencing_token"] == b["fencing_token"], gb
    assert gb["lock"]["wait"]["duration"] == b["waited_ms"] * NANOS > 0, gb
    assert one("released", "a")["event"]["duration"] >= 0
    e = one("expired", "c")
    assert (e["lock"]["fencing_token"], e["event"]["reason"]) == (expiring["fencing_token"], "lease_expired"), e
    assert e["event"]["duration"] >= 1000 * NANOS, e
    f = one("force_released", "d")
    assert (f["lock"]["fencing_token"], f["event"]["reason"]) == (forced["fencing_token"], "stuck job"), f
    pre = one("preempted", "e")
    assert pre["lock"]["key"] == f"{p}-k4" and pre["event"]["duration"] >= 500 * NANOS, pre
    assert one("granted", "g")["lock"]["wait"]["duration"] >= 500 * NANOS
    n = one("renew_refused", "d")
    assert (n["lock"]["fencing_token"], n["event"]["reason"]) == (forced["fencing_token"], "not_held"), n
    # A release and the grant it hands the key to happen in one step, often in one millisecond:
    # their order is that of their timestamps, ties allowed (a search sorts ties either way).
    k1 = {action(d): d["@timestamp"] for d in docs if d["lock"]["key"] == f"{p}-k1"}
    steps = [("granted", "a"), ("released", "a"), ("granted", "b"), ("released", "b")]
    assert sorted(k1) == sorted(steps), k1
    assert [k1[s] for s in steps] == sorted(k1[s] for s in steps), k1

    # The data stream was created from the plugin's templates, with the retention setting. (The
    # integ-test-zip has no data-streams module, so no `_data_stream` API: the templates and the
    # backing index say it.)
    settings_template = ok(lc.call("GET", f"/_component_template/{STREAM}@settings"))
    template = settings_template["component_templates"][0]["component_template"]
    assert template["template"]["lifecycle"]["data_retention"] == "3d", template
    resolved = ok(lc.call("GET", f"/_resolve/index/{STREAM}?expand_wildcards=all"))
    assert [d["name"] for d in resolved["data_streams"]] == [STREAM], resolved
    mapping = ok(lc.call("GET", f"/{STREAM}/_mapping"))
    props = next(iter(mapping.values()))["mappings"]["properties"]
    lock_props = props["lock"]["properties"]
    assert (props["@timestamp"]["type"], lock_props["key"]["type"], lock_props["fencing_token"]["type"],
            props["event"]["properties"]["duration"]["type"]) == ("date", "keyword", "long", "long"), props
    s = node_stats(lc)
    assert s["audit_recorded"] >= len(want) and s["audit_indexed"] >= len(want), s
    assert s["audit_failed"] == 0 and s["audit_dropped"] == 0, s


def test_a_full_buffer_drops_and_counts_and_never_slows_a_lock(lc):
    before = node_stats(lc)
    settings(lc, enabled=True, buffer_size=3)
    p = unique("drop")
    try:
        for i in range(20):
            ok(lc.acquire(f"{p}-{i}", "a"))
            ok(lc.release(f"{p}-{i}", "a"))
        after = node_stats(lc)
    finally:
        settings(lc, buffer_size=None)
    recorded = after["audit_recorded"] - before["audit_recorded"]
    dropped = after["audit_dropped"] - before["audit_dropped"]
    assert recorded + dropped == 40, (before, after)
    assert dropped > 0, "a buffer of 3 cannot keep 40 records between two flushes"
    # Every record that was kept is written: the indexed count catches up with the recorded.
    wait_until(lambda: len(history_of(lc, p)) == recorded, 30, interval=0.25,
               message="the kept records searchable")
    settings(lc, enabled=None)
    assert node_stats(lc)["audit_failed"] == 0


def test_a_refused_write_is_counted_at_most_once_and_the_history_goes_on(lc):
    """A write the cluster refuses (a write block on the data stream) loses its documents and
    counts them in `audit_failed`; nothing is retried, and once the block is gone the next events
    arrive."""
    settings(lc, enabled=True)
    p = unique("blocked")
    try:
        ok(lc.acquire(f"{p}-0", "a"))
        wait_until(lambda: history_of(lc, f"{p}-0"), 30, interval=0.25, message="the data stream exists")
        ok(lc.call("PUT", f"/{STREAM}/_settings", {"index.blocks.write": True}))
        before = node_stats(lc)
        ok(lc.acquire(f"{p}-1", "a"))
        wait_until(lambda: node_stats(lc)["audit_failed"] > before["audit_failed"], 30, interval=0.25,
                   message="the refused write counted")
        ok(lc.call("PUT", f"/{STREAM}/_settings", {"index.blocks.write": None}))
        ok(lc.release(f"{p}-1", "a"))
        docs = wait_until(lambda: history_of(lc, f"{p}-1"), 30, interval=0.25, message="the history goes on")
        assert [action(d) for d in docs] == [("released", "a")], docs
        after = node_stats(lc)
        assert after["audit_failed"] - before["audit_failed"] == 1, (before, after)
    finally:
        lc.call("PUT", f"/{STREAM}/_settings", {"index.blocks.write": None})
        settings(lc, enabled=None)
