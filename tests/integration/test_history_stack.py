"""Issue 50 item 4, a lock history that fits the stack, on a real node:

- the user's `locks-history@custom` component template (docs/API.md "Lock history"): composed
  after the plugin's own, so its mapping, setting and lifecycle apply when the data stream is
  created and on each next backing index (rollover); its absence changes nothing, and the plugin
  never writes it;
- the documents' shape of before (version 1's flat names) rolled over: a write index that maps
  them is rolled over when the plugin installs its templates, the next documents go to a
  backing index of the new names, the old documents keep theirs and nothing is refused;
- the Kibana dashboard (docs/kibana/lock-manager-dashboard.ndjson): every query its panels run,
  taken from the file and expanded as Kibana expands it, answered over a history the test wrote
  (test_history_dashboard.py's checks of the file itself need no node).

One node of this module's own, its tests in order (the first finds no data stream yet). Waits
are bounded polls (`wait_until`), never fixed sleeps. The integ-test-zip has no data-streams
module, so no `_data_stream` API: backing indices are read with `_resolve/index` and the data
stream's lifecycle from the cluster state.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import pytest

import kibana_dashboard as kd
from cluster_kit import OneNode
from lockclient import LockClient, ok, unique, wait_for_waiter, wait_until

sys.path.insert(0, str(kd.ROOT / "docs" / "kibana"))  # collect_stats.py, the stats collector

STREAM = "locks-history"
CUSTOM = f"{STREAM}@custom"
NANOS = 1_000_000  # ECS durations are nanoseconds; the lock API answers milliseconds

ONE_NODE = OneNode("eslm-it-history-stack")
# Templates, rollover and the data stream's metadata are read through Elasticsearch's APIs, which
# differ between majors (org.eslm.compat.ProjectScope.dataStream).
pytestmark = pytest.mark.every_version

# What a user might put in their @custom: a text sub-field to search owners by word, a setting,
# and a retention of their own.
USERS_CUSTOM = {
    "template": {
        "settings": {"index.codec": "best_compression"},
        "mappings": {"properties": {"lock": {"properties": {
            "owner": {"type": "keyword", "fields": {"text": {"type": "text"}}}}}}},
        "lifecycle": {"data_retention": "30d"},
    },
}

# Version 1's template as the plugin of before installed it (java LockHistory.template, git
# history), for an older node's write index.
OLDER_TEMPLATE = {
    "index_patterns": [STREAM],
    "data_stream": {},
    "priority": 500,
    "_meta": {"managed_by": "lock-manager", "description": "lock history (docs/API.md)"},
    "template": {
        "settings": {"index.number_of_shards": 1, "index.auto_expand_replicas": "0-1"},
        "mappings": {"dynamic": False, "properties": {
            "@timestamp": {"type": "date"}, "event": {"type": "keyword"}, "key": {"type": "keyword"},
            "scope": {"type": "keyword"}, "owner": {"type": "keyword"}, "mode": {"type": "keyword"},
            "token": {"type": "long"}, "waited_ms": {"type": "long"}, "held_ms": {"type": "long"},
            "reason": {"type": "keyword"}, "partition": {"type": "integer"}, "node": {"type": "keyword"}}},
        "lifecycle": {"data_retention": "7d"},
    },
}


def settings(lc: LockClient, **values) -> None:
    ok(lc.put_cluster_settings({f"locks.audit.{k}": v for k, v in values.items()}))


def node_stats(lc: LockClient) -> dict:
    return next(iter(ok(lc.stats())["nodes"].values()))["locks"]


def backing_indices(lc: LockClient) -> list[str]:
    """The data stream's backing indices, oldest first ([] while it does not exist)."""
    answer = lc.call("GET", f"/_resolve/index/{STREAM}?expand_wildcards=all")
    if answer.status_code == 404:
        return []
    r = ok(answer)
    streams = [d for d in r["data_streams"] if d["name"] == STREAM]
    if not streams:
        return []
    backing = streams[0]["backing_indices"]
    return sorted(backing, key=lambda name: int(name.rsplit("-", 1)[1]))


def docs_of(lc: LockClient, index: str, key_prefix: str, field: str = "lock.key") -> list[dict]:
    """The documents of `index` whose `field` starts with `key_prefix` ([] while none)."""
    r = lc.call("POST", f"/{index}/_search", {"size": 100, "query": {"prefix": {field: key_prefix}},
                                               "sort": [{"@timestamp": "asc"}]})
    if r.status_code in (404, 503):
        return []
    return [dict(h["_source"], _index=h["_index"]) for h in ok(r)["hits"]["hits"]]


def lock_and_release(lc: LockClient, key: str, owner: str) -> None:
    ok(lc.acquire(key, owner))
    ok(lc.release(key, owner))


def written(lc: LockClient, key: str, count: int = 2) -> list[dict]:
    """Waits until `count` documents of `key` are searchable; answers them."""
    return wait_until(lambda: (lambda d: d if len(d) >= count else None)(docs_of(lc, STREAM, key)),
                      30, interval=0.25, message=f"the history of {key}")


def index_settings(lc: LockClient, index: str) -> dict:
    return ok(lc.call("GET", f"/{index}/_settings?flat_settings=true"))[index]["settings"]


def index_mapping(lc: LockClient, index: str) -> dict:
    return ok(lc.call("GET", f"/{index}/_mapping"))[index]["mappings"]


def stream_lifecycle(lc: LockClient) -> dict:
    r = ok(lc.call("GET", f"/_cluster/state/metadata/{STREAM}"))
    return r["metadata"]["data_stream"]["data_stream"][STREAM].get("lifecycle", {})


def plugin_mappings(lc: LockClient) -> dict:
    r = ok(lc.call("GET", f"/_component_template/{STREAM}@mappings"))
    return r["component_templates"][0]["component_template"]["template"]["mappings"]


def rollover(lc: LockClient) -> str:
    return ok(lc.call("POST", f"/{STREAM}/_rollover"))["new_index"]


def test_a_users_custom_template_applies_at_creation_and_rollover_and_its_absence_changes_nothing(lc):
    assert backing_indices(lc) == [], "this module's node starts without the history"
    ok(lc.call("PUT", f"/_component_template/{CUSTOM}", USERS_CUSTOM))
    p = unique("custom")
    settings(lc, enabled=True, retention="3d")
    try:
        # At creation: the data stream's first backing index has the user's mapping and setting
        # beside the plugin's, and the user's retention rather than the plugin's.
        lock_and_release(lc, f"{p}-1", "night batch")
        written(lc, f"{p}-1")
        [first] = backing_indices(lc)
        s = index_settings(lc, first)
        assert (s["index.codec"], s["index.number_of_shards"], s["index.auto_expand_replicas"]) == (
            "best_compression", "1", "0-1"), s
        owner = index_mapping(lc, first)["properties"]["lock"]["properties"]["owner"]
        assert owner == {"type": "keyword", "fields": {"text": {"type": "text"}}}, owner
        by_word = ok(lc.call("POST", f"/{STREAM}/_search", {"query": {"match": {"lock.owner.text": "batch"}}}))
        assert {h["_source"]["lock"]["key"] for h in by_word["hits"]["hits"]} == {f"{p}-1"}, by_word
        assert stream_lifecycle(lc).get("data_retention") == "30d", stream_lifecycle(lc)

        # Gone: the next backing index is exactly the plugin's, and the history goes on.
        ok(lc.call("DELETE", f"/_component_template/{CUSTOM}"))
        second = rollover(lc)
        lock_and_release(lc, f"{p}-2", "night batch")
        assert {d["_index"] for d in written(lc, f"{p}-2")} == {second}
        s = index_settings(lc, second)
        assert "index.codec" not in s and s["index.number_of_shards"] == "1", s
        mapping, plugins = index_mapping(lc, second), plugin_mappings(lc)
        assert mapping["properties"] == plugins["properties"], (mapping, plugins)
        assert str(mapping["dynamic"]).lower() == str(plugins["dynamic"]).lower() == "false", mapping
        by_word = ok(lc.call("POST", f"/{second}/_search", {"query": {"match": {"lock.owner.text": "batch"}}}))
        assert by_word["hits"]["total"]["value"] == 0, "not mapped without the user's template"

        # The plugin never writes @custom, even when it installs its templates again (a changed
        # retention makes it).
        settings(lc, retention="4d")
        lock_and_release(lc, f"{p}-3", "a")
        written(lc, f"{p}-3")
        r = ok(lc.call("GET", f"/_component_template/{STREAM}@settings"))
        lifecycle = r["component_templates"][0]["component_template"]["template"]["lifecycle"]
        assert lifecycle["data_retention"] == "4d", r
        assert lc.call("GET", f"/_component_template/{CUSTOM}").status_code == 404

        # Back again: it takes effect on the next backing index.
        ok(lc.call("PUT", f"/_component_template/{CUSTOM}", USERS_CUSTOM))
        third = rollover(lc)
        lock_and_release(lc, f"{p}-4", "night batch")
        assert {d["_index"] for d in written(lc, f"{p}-4")} == {third}
        assert index_settings(lc, third)["index.codec"] == "best_compression"
        assert node_stats(lc)["audit_failed"] == 0
    finally:
        lc.call("DELETE", f"/_component_template/{CUSTOM}")
        settings(lc, enabled=None, retention=None)


def test_a_write_index_of_the_older_shape_is_rolled_over_and_nothing_is_refused(lc):
    """An older plugin's data stream (a node of version 1 installed its template and wrote): when
    this plugin installs its templates (at its first write, after a restart, or as here after a
    changed retention) it rolls the write index over; the next documents go to a backing
    index of the new names, the old ones keep theirs."""
    # The older shape's write index, as an older node of a mixed cluster leaves it.
    ok(lc.call("PUT", f"/_index_template/{STREAM}", OLDER_TEMPLATE))
    older = rollover(lc)
    assert index_mapping(lc, older)["properties"]["event"] == {"type": "keyword"}
    p = unique("older")
    old_doc = {"@timestamp": int(time.time() * 1000), "event": "granted", "key": f"{p}-old", "scope": "key",
               "owner": "w-1", "mode": "exclusive", "token": 7, "partition": 0, "node": "node-0"}
    r = ok(lc.call("POST", "/_bulk?refresh=true", raw=f'{{"create":{{"_index":"{STREAM}"}}}}\n'
                   + json.dumps(old_doc) + "\n"))
    assert not r["errors"], r
    before = node_stats(lc)

    settings(lc, enabled=True, retention="5d")
    try:
        lock_and_release(lc, f"{p}-new", "w-2")
        docs = written(lc, f"{p}-new")
        newer = backing_indices(lc)[-1]
        assert newer != older and {d["_index"] for d in docs} == {newer}, (older, newer, docs)
        assert [d["event"]["action"] for d in docs] == ["granted", "released"], docs
        assert "action" in index_mapping(lc, newer)["properties"]["event"]["properties"]
        # The old document is where it was, with the names it was written with.
        [kept] = docs_of(lc, STREAM, f"{p}-old", field="key")
        assert (kept["_index"], kept["event"], kept["owner"]) == (older, "granted", "w-1"), kept
        template = ok(lc.call("GET", f"/_index_template/{STREAM}"))["index_templates"][0]["index_template"]
        assert template["version"] == 2 and CUSTOM in template["composed_of"], template
        after = node_stats(lc)
        assert after["audit_failed"] == before["audit_failed"], (before, after)

        # An older node of a mixed cluster puts its template back and the write index rolls over
        # to it: this plugin's documents are refused there (counted), which makes it install its
        # templates again, and the next documents are written.
        ok(lc.call("PUT", f"/_index_template/{STREAM}", OLDER_TEMPLATE))
        older_again = rollover(lc)
        lock_and_release(lc, f"{p}-refused", "w-3")
        wait_until(lambda: node_stats(lc)["audit_failed"] > after["audit_failed"], 30, interval=0.25,
                   message="the refused documents counted")
        lock_and_release(lc, f"{p}-healed", "w-3")
        healed = written(lc, f"{p}-healed")
        assert older_again not in {d["_index"] for d in healed}, (older_again, healed)
        assert node_stats(lc)["audit_failed"] - after["audit_failed"] in (1, 2)
        template = ok(lc.call("GET", f"/_index_template/{STREAM}"))["index_templates"][0]["index_template"]
        assert template["version"] == 2, template
    finally:
        settings(lc, enabled=None, retention=None)


# --- the dashboard's queries ------------------------------------------------------------------

def panel_answer(lc: LockClient, id_: str, bounds: tuple[int, int], context: dict | None = None):
    """What the panel `id_` gets: its request, expanded as Kibana expands it, sent as Kibana sends
    it, and the part of the answer its `format.property` takes."""
    spec = kd.vega_specs()[id_]
    index, body = kd.vega_request(spec, bounds, context)
    answer = ok(lc.call("POST", f"/{index}/_search?ignore_unavailable=true", body))
    assert answer["_shards"]["failed"] == 0, answer
    return kd.at_path(answer, spec["data"]["format"]["property"])


def drawn(answers: dict[str, list]) -> dict[str, dict]:
    """Each panel drawn with what its request got: no error, no warning (a field the spec names
    that the data lacks is one); answers the items drawn per mark type."""
    specs = kd.vega_specs()
    reports = kd.draw([(id_, specs[id_], values) for id_, values in answers.items()])
    for id_, report in reports.items():
        assert "error" not in report and not report["warnings"], (id_, report)
    return {id_: report["items"] for id_, report in reports.items()}


def history_scenario(lc: LockClient, p: str) -> dict:
    """Locks taken, waited for, expired and force-released under keys starting with `p`; answers
    the lock API's answers that the history must agree with."""
    out = {}
    # k1: alpha holds, beta and zeta queue behind it and are granted in turn.
    ok(lc.acquire(f"{p}-k1", "alpha", lease="30s"))
    waiters = {}
    for owner in ("beta", "zeta"):
        t = threading.Thread(target=lambda o=owner: waiters.update(
            {o: lc_for(lc).acquire(f"{p}-k1", o, wait="30s", lease="30s", timeout=40)}))
        t.start()
        wait_for_waiter(lc, f"{p}-k1", owner)
        waiters[owner + "-thread"] = t
    ok(lc.release(f"{p}-k1", "alpha"))
    waiters["beta-thread"].join(40)
    out["beta"] = ok(waiters["beta"])
    ok(lc.release(f"{p}-k1", "beta"))
    waiters["zeta-thread"].join(40)
    out["zeta"] = ok(waiters["zeta"])
    ok(lc.release(f"{p}-k1", "zeta"))
    # k2: gamma's lease of 2 s runs out while delta waits; delta gets it then.
    out["gamma"] = ok(lc.acquire(f"{p}-k2", "gamma", lease="2s"))
    out["delta"] = ok(lc.acquire(f"{p}-k2", "delta", wait="30s", lease="30s", timeout=40))
    ok(lc.release(f"{p}-k2", "delta"))
    # k3: epsilon's lock taken by an administrator.
    out["epsilon"] = ok(lc.acquire(f"{p}-k3", "epsilon"))
    ok(lc.force_release(f"{p}-k3", reason="stuck job"))
    return out


def lc_for(lc: LockClient) -> LockClient:
    """A client of its own for a thread (a requests session is not shared between threads)."""
    return LockClient(lc.base_url)


def test_the_dashboards_history_queries_answer_what_happened(lc):
    """Every history panel's query, over a history the test wrote: 6 grants (2 after a wait on
    k1, 1 on k2), 4 releases, 1 expiry, 1 force-release; the numbers each panel shows are
    those of the documents and of the lock API's answers. The documents of the tests before (and
    the older shape's, in the same data stream) are outside the dashboard filter the test sets,
    as a user's filter would set it, except for the unfiltered run that only checks that every
    query runs over both shapes."""
    p = unique("board")
    start = int(time.time() * 1000) - 60_000
    settings(lc, enabled=True)
    try:
        answers = history_scenario(lc, p)
        want = 12
        docs = wait_until(lambda: (lambda d: d if len(d) >= want else None)(docs_of(lc, STREAM, p)),
                          30, interval=0.25, message="the scenario's history")
    finally:
        settings(lc, enabled=None)
    assert len(docs) == want, docs
    bounds = (start, int(time.time() * 1000) + 60_000)
    context = kd.dashboard_context([{"prefix": {"lock.key": p}}])

    # Every field a panel names is mapped by the plugin's templates.
    mapped = json.dumps(plugin_mappings(lc))
    for id_, spec in kd.vega_specs().items():
        if spec["data"]["url"]["index"] == STREAM:
            for field in kd.fields_named(spec["data"]["url"]["body"]):
                assert f'"{field.rsplit(".", 1)[-1]}"' in mapped, (id_, field)

    # Lock events over time: per action, the scenario's counts.
    buckets = panel_answer(lc, "eslm-lock-events", bounds, context)
    per_action: dict[str, int] = {}
    for b in buckets:
        for a in b["actions"]["buckets"]:
            per_action[a["key"]] = per_action.get(a["key"], 0) + a["doc_count"]
    assert per_action == {"granted": 6, "released": 4, "expired": 1, "force_released": 1}, per_action
    assert len(buckets) >= 2 and all("key" in b for b in buckets), "a bucket per interval of the range"

    # Longest holds: the six ended holds, longest first, the expired one (2 s lease) on top.
    hits = panel_answer(lc, "eslm-longest-holds", bounds, context)
    ended = sorted((d["event"]["duration"] for d in docs if "duration" in d["event"]), reverse=True)
    assert [h["_source"]["event"]["duration"] for h in hits] == ended and len(ended) == 6, hits
    top = hits[0]["_source"]
    assert (top["lock"]["key"], top["lock"]["owner"], top["event"]["action"]) == (f"{p}-k2", "gamma", "expired"), top
    assert top["event"]["duration"] >= 2000 * NANOS and top["lock"]["fencing_token"] == answers["gamma"]["fencing_token"]

    # Most contended keys: k1 waited for twice, k2 once; the longest and total waits the documents'.
    keys = panel_answer(lc, "eslm-contended-keys", bounds, context)
    waits = [d for d in docs if "wait" in d["lock"]]
    assert [(k["key"], k["doc_count"], k["owners"]["value"]) for k in keys] == [
        (f"{p}-k1", 2, 2), (f"{p}-k2", 1, 1)], keys
    for k in keys:
        mine = [d["lock"]["wait"]["duration"] for d in waits if d["lock"]["key"] == k["key"]]
        assert (k["longest"]["value"], k["total"]["value"]) == (max(mine), sum(mine)), (k, mine)

    # Who waited longest: delta (behind a 2 s lease) first; each owner's wait as the lock API
    # answered it (waited_ms), in nanoseconds.
    owners = panel_answer(lc, "eslm-longest-waiters", bounds, context)
    assert [o["key"] for o in owners][0] == "delta", owners
    assert {o["key"]: o["longest"]["value"] for o in owners} == {
        who: answers[who]["waited_ms"] * NANOS for who in ("beta", "zeta", "delta")}, (owners, answers)

    # Trouble by key: k2 expired, k3 force-released.
    trouble = panel_answer(lc, "eslm-trouble-by-key", bounds, context)
    assert sorted((k["key"], a["key"], a["doc_count"]) for k in trouble for a in k["actions"]["buckets"]) == [
        (f"{p}-k2", "expired", 1), (f"{p}-k3", "force_released", 1)], trouble

    # The saved search "Lock trouble": the expiry and the force-release, newest first.
    search = kd.by_id()["eslm-lock-trouble"]
    found = ok(lc.call("POST", f"/{STREAM}/_search", kd.discover_request(search, STREAM, bounds, [
        {"prefix": {"lock.key": p}}])))
    assert [(h["_source"]["event"]["action"], h["_source"]["lock"]["owner"]) for h in found["hits"]["hits"]] == [
        ("force_released", "epsilon"), ("expired", "gamma")], found
    assert found["hits"]["hits"][0]["_source"]["event"]["reason"] == "stuck job"

    # Drawn as Kibana draws them (Vega-Lite), with these answers: a bar per event.action per
    # interval, per hold, per key, per owner, per key and action.
    items = drawn({"eslm-lock-events": buckets, "eslm-longest-holds": hits, "eslm-contended-keys": keys,
                   "eslm-longest-waiters": owners, "eslm-trouble-by-key": trouble})
    intervals = sum(1 for b in buckets for _ in b["actions"]["buckets"])
    assert items == {"eslm-lock-events": {"rect": intervals}, "eslm-longest-holds": {"rect": 6},
                     "eslm-contended-keys": {"rect": 2}, "eslm-longest-waiters": {"rect": 3},
                     "eslm-trouble-by-key": {"rect": 2}}, items

    # Unfiltered, over the whole data stream (this module's other tests' documents, the older
    # shape's among them): every query runs, and finds at least the scenario.
    for id_, spec in kd.vega_specs().items():
        if spec["data"]["url"]["index"] == STREAM:
            assert panel_answer(lc, id_, bounds) is not None


def test_the_dashboards_stats_queries_answer_what_stats_said(lc):
    """The stats panels over `locks-stats` as docs/kibana/collect_stats.py writes it: two rounds,
    the first with two locks held and one waiter, the second after all ended; each panel's
    numbers those of the rounds' `_stats`."""
    import collect_stats

    p = unique("stats")
    collector = collect_stats.Elasticsearch(lc.base_url, None, None, None, None, False, 30)
    collect_stats.install_template(collector)
    collect_stats.install_template(collector)  # a second run leaves the template alone
    ok(lc.acquire(f"{p}-1", "omega"))
    ok(lc.acquire(f"{p}-2", "omega"))
    waiter = threading.Thread(target=lambda: lc_for(lc).acquire(f"{p}-1", "psi", wait="30s", timeout=40))
    waiter.start()
    wait_for_waiter(lc, f"{p}-1", "psi")
    assert collect_stats.collect(collector) == 1
    first = stats_docs(lc)[-1]
    assert (first["locks"]["held"], first["locks"]["waiting"]) == (2, 1), first
    ok(lc.release(f"{p}-1", "omega"))
    waiter.join(40)
    ok(lc.release(f"{p}-1", "psi"))
    ok(lc.release(f"{p}-2", "omega"))
    # The second round in a later one-second bucket of the panels' interval (a range of two
    # minutes at Kibana's ~50 buckets: 1 s).
    wait_until(lambda: int(time.time() * 1000) // 1000 > first["@timestamp"] // 1000, 5, interval=0.05,
               message="the next second")
    assert collect_stats.collect(collector) == 1
    second = stats_docs(lc)[-1]
    assert second["locks"]["held"] == 0 and second["locks"]["grants"] >= first["locks"]["grants"] + 1, second
    # A range of a minute around the rounds: Kibana's ~50 buckets of it are of 1 s.
    bounds = (first["@timestamp"] - 30_000, second["@timestamp"] + 30_000)
    assert kd.vega_request(kd.vega_specs()["eslm-stats-gauges"], bounds)[1]["aggs"]["time"]["date_histogram"][
        "fixed_interval"] == "1s"
    node = first["service"]["node"]["name"]

    def bucket(buckets, doc):
        return next(b for b in buckets if b["key"] <= doc["@timestamp"] < b["key"] + 1000)

    gauges = panel_answer(lc, "eslm-stats-gauges", bounds)
    assert bucket(gauges, first)["nodes"]["buckets"][0]["key"] == node
    for doc in (first, second):
        [n] = bucket(gauges, doc)["nodes"]["buckets"]
        assert (n["held"]["value"], n["waiting"]["value"], n["sessions"]["value"]) == (
            doc["locks"]["held"], doc["locks"]["waiting"], doc["locks"]["sessions"]), (n, doc)

    counters = panel_answer(lc, "eslm-stats-counters", bounds)
    for doc in (first, second):
        [n] = bucket(counters, doc)["nodes"]["buckets"]
        for name in ("grants", "conflicts", "timeouts", "expiries", "preemptions"):
            assert n[name]["value"] == doc["locks"][name], (name, n, doc)

    times = panel_answer(lc, "eslm-stats-percentiles", bounds)
    for doc in (first, second):
        b = bucket(times, doc)
        assert (b["wait_time_ms_p99"]["value"], b["hold_time_ms_max"]["value"]) == (
            doc["locks"]["wait_time_ms"]["p99"], doc["locks"]["hold_time_ms"]["max"]), (b, doc)

    # Drawn: three lines of gauges and four of times through a point per round (a line's items are
    # its points); a bar per counter per round (the first round's increase 0: nothing before it).
    items = drawn({"eslm-stats-gauges": gauges, "eslm-stats-counters": counters, "eslm-stats-percentiles": times})
    assert items == {"eslm-stats-gauges": {"line": 6, "symbol": 6}, "eslm-stats-counters": {"rect": 10},
                     "eslm-stats-percentiles": {"line": 8, "symbol": 8}}, items


def stats_docs(lc: LockClient) -> list[dict]:
    """The documents of `locks-stats`, oldest first."""
    ok(lc.call("POST", "/locks-stats/_refresh"))
    r = ok(lc.call("POST", "/locks-stats/_search", {"size": 100, "sort": [{"@timestamp": "asc"}]}))
    return [h["_source"] for h in r["hits"]["hits"]]
