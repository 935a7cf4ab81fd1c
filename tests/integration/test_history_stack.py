"""Issue 50 item 4, a lock history that fits the stack, on a real node:

- the user's `locks-history@custom` component template (docs/API.md "Lock history"): composed
  after the plugin's own, so its mapping, setting and lifecycle apply when the data stream is
  created and on each next backing index (rollover); its absence changes nothing, and the plugin
  never writes it;
- the documents' shape of before (version 1's flat names) rolled over: a write index that maps
  them is rolled over lazily when the plugin installs its templates, the next documents go to a
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
import time

from cluster_kit import OneNode
from lockclient import LockClient, ok, unique, wait_until

STREAM = "locks-history"
CUSTOM = f"{STREAM}@custom"

ONE_NODE = OneNode("eslm-it-history-stack")

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
    changed retention) it rolls the write index over lazily; the next documents go to a backing
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
