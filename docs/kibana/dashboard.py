#!/usr/bin/env python3
"""Writes lock-manager-dashboard.ndjson beside it: the Kibana saved objects of the lock manager's
dashboard (docs/OPERATIONS.md "The lock history"), importable with Kibana's saved objects import
API or Stack Management > Saved objects > Import (Kibana 8.19 and 9.x).

This file is the source: the panels are written here as Python data and dumped in the shape
Kibana exports (one object a line, `visState` and the like as JSON strings). Run it after a
change; tests/integration/test_kibana_dashboard.py fails while the .ndjson differs from what it
writes.

    python3 docs/kibana/dashboard.py

The panels are Vega-Lite specs, so that the Elasticsearch request each one runs is in the file
(`data.url`: index and body, with Kibana's `%context%`, `%timefield%`, `%autointerval%` and
`%timefilter%`), and tests/integration/test_history_stack.py runs every one of them against a
node, expanded as Kibana expands them, and draws the panels with the answers (Vega-Lite, headless). The history panels read the data stream `locks-history`
(docs/API.md "Lock history"); the stats panels read `locks-stats`, which collect_stats.py beside
this file writes from `GET _locks/_stats` (Kibana reads indices, not REST endpoints).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "lock-manager-dashboard.ndjson"

HISTORY, STATS = "locks-history", "locks-stats"
HISTORY_VIEW, STATS_VIEW = "eslm-locks-history", "eslm-locks-stats"
VEGA_LITE = "https://vega.github.io/schema/vega-lite/v5.json"
# The saved objects' versions Kibana 8.8+ exports, from which an import migrates them forward.
CORE_MIGRATION = "8.8.0"
TYPE_MIGRATION = {"index-pattern": "7.11.0", "search": "7.9.3", "visualization": "8.0.0", "dashboard": "8.7.0"}
# The actions that mean trouble: a lock ended by something other than its holder, a refusal.
TROUBLE = ["expired", "force_released", "preempted", "deadlock_victim", "renew_refused"]
NANOS_AS_DURATION = {"id": "duration", "params": {"inputFormat": "nanoseconds", "outputFormat": "humanizePrecise",
                                                   "outputPrecision": 1}}
MILLIS_AS_DURATION = {"id": "duration", "params": {"inputFormat": "milliseconds", "outputFormat": "humanizePrecise",
                                                    "outputPrecision": 1}}


def url(index: str, aggs: dict) -> dict:
    """A Vega data URL: a search of `index` in the dashboard's context (its query, filters and
    time range on `@timestamp`), aggregations only."""
    return {"index": index, "%context%": True, "%timefield%": "@timestamp", "body": {"size": 0, "aggs": aggs}}


def over_time(aggs: dict) -> dict:
    """A date histogram over the time picker's range at Kibana's automatic interval."""
    return {"time": {
        "date_histogram": {"field": "@timestamp", "interval": {"%autointerval%": True}, "min_doc_count": 0,
                           "extended_bounds": {"min": {"%timefilter%": "min"}, "max": {"%timefilter%": "max"}}},
        "aggs": aggs}}


def spec(title: str, index: str, aggs: dict, buckets: str, transform: list, mark, encoding: dict) -> dict:
    return {"$schema": VEGA_LITE, "title": title,
            "data": {"url": url(index, aggs), "format": {"property": buckets}},
            "transform": transform, "mark": mark, "encoding": encoding}


def seconds(expression: str) -> str:
    """A Vega expression of nanoseconds, in seconds."""
    return f"({expression}) / 1e9"


WAITED = {"filter": {"exists": {"field": "lock.wait.duration"}}}

PANELS = {
    "eslm-lock-events": spec(
        "Lock events over time", HISTORY,
        over_time({"actions": {"terms": {"field": "event.action", "size": 10}}}),
        "aggregations.time.buckets",
        [{"flatten": ["actions.buckets"], "as": ["action"]},
         {"calculate": "datum.action.key", "as": "what"},
         {"calculate": "datum.action.doc_count", "as": "events"}],
        "bar",
        {"x": {"field": "key", "type": "temporal", "title": None},
         "y": {"field": "events", "type": "quantitative", "aggregate": "sum", "title": "events"},
         "color": {"field": "what", "type": "nominal", "title": "event.action"},
         "tooltip": [{"field": "what", "title": "event.action"}, {"field": "events", "aggregate": "sum"}]}),
    "eslm-longest-holds": spec(
        "Longest holds (how each ended)", HISTORY,
        {"holds": {"filter": {"exists": {"field": "event.duration"}}, "aggs": {"top": {"top_hits": {
            # unmapped_type: the backing indices of the older field names have no event.duration
            "size": 10, "sort": [{"event.duration": {"order": "desc", "unmapped_type": "long"}}],
            "_source": {"includes": ["@timestamp", "event.action", "event.duration", "event.reason", "lock.key",
                                     "lock.owner", "lock.fencing_token", "service.node.name"]}}}}}},
        "aggregations.holds.top.hits.hits",
        [{"calculate": "datum._source.lock.key + ' · ' + datum._source.lock.owner"
                       " + ' · token ' + datum._source.lock.fencing_token", "as": "hold"},
         {"calculate": seconds("datum._source.event.duration"), "as": "held (s)"},
         {"calculate": "datum._source.event.action", "as": "ended"}],
        "bar",
        {"y": {"field": "hold", "type": "nominal", "sort": "-x", "title": None},
         "x": {"field": "held (s)", "type": "quantitative"},
         "color": {"field": "ended", "type": "nominal"},
         "tooltip": [{"field": "hold"}, {"field": "held (s)"}, {"field": "ended"}]}),
    "eslm-contended-keys": spec(
        "Most contended keys (grants after a wait, deadlock victims)", HISTORY,
        {"waited": dict(WAITED, aggs={"keys": {
            "terms": {"field": "lock.key", "size": 10, "order": {"_count": "desc"}},
            "aggs": {"longest": {"max": {"field": "lock.wait.duration"}},
                     "total": {"sum": {"field": "lock.wait.duration"}},
                     "owners": {"cardinality": {"field": "lock.owner"}}}}})},
        "aggregations.waited.keys.buckets",
        [{"calculate": seconds("datum.longest.value"), "as": "longest wait (s)"},
         {"calculate": seconds("datum.total.value"), "as": "time waited (s)"},
         {"calculate": "datum.owners.value", "as": "owners"}],
        "bar",
        {"y": {"field": "key", "type": "nominal", "sort": "-x", "title": "lock.key"},
         "x": {"field": "doc_count", "type": "quantitative", "title": "waits"},
         "tooltip": [{"field": "key"}, {"field": "doc_count", "title": "waits"}, {"field": "longest wait (s)"},
                     {"field": "time waited (s)"}, {"field": "owners"}]}),
    "eslm-longest-waiters": spec(
        "Who waited longest", HISTORY,
        {"waited": dict(WAITED, aggs={"owners": {
            "terms": {"field": "lock.owner", "size": 10, "order": {"longest": "desc"}},
            "aggs": {"longest": {"max": {"field": "lock.wait.duration"}},
                     "total": {"sum": {"field": "lock.wait.duration"}}}}})},
        "aggregations.waited.owners.buckets",
        [{"calculate": seconds("datum.longest.value"), "as": "longest wait (s)"},
         {"calculate": seconds("datum.total.value"), "as": "time waited (s)"}],
        "bar",
        {"y": {"field": "key", "type": "nominal", "sort": "-x", "title": "lock.owner"},
         "x": {"field": "longest wait (s)", "type": "quantitative"},
         "tooltip": [{"field": "key"}, {"field": "longest wait (s)"}, {"field": "time waited (s)"},
                     {"field": "doc_count", "title": "waits"}]}),
    "eslm-trouble-by-key": spec(
        "Expiries, force-releases, preemptions, deadlocks, refused renewals by key", HISTORY,
        {"trouble": {"filter": {"terms": {"event.action": TROUBLE}}, "aggs": {"keys": {
            "terms": {"field": "lock.key", "size": 10},
            "aggs": {"actions": {"terms": {"field": "event.action", "size": len(TROUBLE)}}}}}}},
        "aggregations.trouble.keys.buckets",
        [{"flatten": ["actions.buckets"], "as": ["action"]},
         {"calculate": "datum.action.key", "as": "what"},
         {"calculate": "datum.action.doc_count", "as": "events"}],
        "bar",
        {"y": {"field": "key", "type": "nominal", "sort": "-x", "title": "lock.key"},
         "x": {"field": "events", "type": "quantitative", "aggregate": "sum"},
         "color": {"field": "what", "type": "nominal", "title": "event.action"},
         "tooltip": [{"field": "key"}, {"field": "what"}, {"field": "events", "aggregate": "sum"}]}),
    "eslm-stats-gauges": spec(
        "Held, waiting, sessions (all nodes)", STATS,
        over_time({"nodes": {"terms": {"field": "service.node.name", "size": 100}, "aggs": {
            "held": {"avg": {"field": "locks.held"}}, "waiting": {"avg": {"field": "locks.waiting"}},
            "sessions": {"avg": {"field": "locks.sessions"}}}}}),
        "aggregations.time.buckets",
        [{"flatten": ["nodes.buckets"], "as": ["node"]},
         {"calculate": "datum.node.held.value", "as": "held"},
         {"calculate": "datum.node.waiting.value", "as": "waiting"},
         {"calculate": "datum.node.sessions.value", "as": "sessions"},
         {"aggregate": [{"op": "sum", "field": "held", "as": "held"}, {"op": "sum", "field": "waiting", "as": "waiting"},
                        {"op": "sum", "field": "sessions", "as": "sessions"}], "groupby": ["key"]},
         {"fold": ["held", "waiting", "sessions"], "as": ["gauge", "value"]}],
        {"type": "line", "point": True},
        {"x": {"field": "key", "type": "temporal", "title": None},
         "y": {"field": "value", "type": "quantitative", "title": None},
         "color": {"field": "gauge", "type": "nominal", "title": None}}),
    "eslm-stats-counters": spec(
        "Grants, conflicts, timeouts, expiries, preemptions per interval", STATS,
        over_time({"nodes": {"terms": {"field": "service.node.name", "size": 100}, "aggs": {
            name: {"max": {"field": f"locks.{name}"}}
            for name in ("grants", "conflicts", "timeouts", "expiries", "preemptions")}}}),
        "aggregations.time.buckets",
        [{"flatten": ["nodes.buckets"], "as": ["node"]},
         {"calculate": "datum.node.key", "as": "node name"},
         *[{"calculate": f"datum.node.{name}.value", "as": name}
           for name in ("grants", "conflicts", "timeouts", "expiries", "preemptions")],
         {"fold": ["grants", "conflicts", "timeouts", "expiries", "preemptions"], "as": ["counter", "total"]},
         {"filter": "datum.total != null"},
         # Counters since the partitions opened: per node, the increase since the bucket before
         # (a node's restart starts them again from 0: then the value is the increase).
         {"window": [{"op": "lag", "field": "total", "as": "before"}], "groupby": ["node name", "counter"],
          "sort": [{"field": "key"}]},
         {"calculate": "datum.before == null ? 0 : (datum.total >= datum.before ? datum.total - datum.before"
                       " : datum.total)", "as": "increase"}],
        "bar",
        {"x": {"field": "key", "type": "temporal", "title": None},
         "y": {"field": "increase", "type": "quantitative", "aggregate": "sum", "title": None},
         "color": {"field": "counter", "type": "nominal", "title": None}}),
    "eslm-stats-percentiles": spec(
        "Wait and hold times, p99 and max of the last 60 s (ms, largest node)", STATS,
        over_time({name.replace(".", "_"): {"max": {"field": f"locks.{name}"}}
                   for name in ("wait_time_ms.p99", "wait_time_ms.max", "hold_time_ms.p99", "hold_time_ms.max")}),
        "aggregations.time.buckets",
        [*[{"calculate": f"datum.{name}.value", "as": name.replace("_time_ms_", " ")}
           for name in ("wait_time_ms_p99", "wait_time_ms_max", "hold_time_ms_p99", "hold_time_ms_max")],
         {"fold": ["wait p99", "wait max", "hold p99", "hold max"], "as": ["time", "ms"]},
         {"filter": "datum.ms != null"}],
        {"type": "line", "point": True},
        {"x": {"field": "key", "type": "temporal", "title": None},
         "y": {"field": "ms", "type": "quantitative", "title": "ms"},
         "color": {"field": "time", "type": "nominal", "title": None}}),
}

SEARCH_ID = "eslm-lock-trouble"
SEARCH_QUERY = "event.action:(" + " OR ".join(TROUBLE) + ")"
SEARCH_COLUMNS = ["event.action", "lock.key", "lock.owner", "event.reason", "event.duration", "lock.fencing_token",
                  "service.node.name"]
README_ID = "eslm-lock-manager-readme"
README = """**Lock manager** (Elasticsearch Lock Manager plugin).

The history panels read the data stream `locks-history`: turn it on with the cluster setting
`locks.audit.enabled: true` (docs/API.md "Lock history"). The stats panels read `locks-stats`,
which Kibana cannot fetch from `GET _locks/_stats` by itself: run `collect_stats.py` (beside this
dashboard's file) or another collector that writes the same fields (docs/OPERATIONS.md "The lock
history"). Durations in the history are nanoseconds (ECS), shown in seconds here. Every panel
follows the time picker, the query bar and the filters."""

# (id, type, title, x, y, w, h) of the dashboard's panels, in reading order.
LAYOUT = [
    (README_ID, "visualization", 0, 0, 48, 7),
    ("eslm-lock-events", "visualization", 0, 7, 30, 14),
    ("eslm-trouble-by-key", "visualization", 30, 7, 18, 14),
    ("eslm-longest-holds", "visualization", 0, 21, 24, 14),
    ("eslm-contended-keys", "visualization", 24, 21, 24, 14),
    ("eslm-longest-waiters", "visualization", 0, 35, 24, 14),
    (SEARCH_ID, "search", 24, 35, 24, 14),
    ("eslm-stats-gauges", "visualization", 0, 49, 16, 14),
    ("eslm-stats-counters", "visualization", 16, 49, 16, 14),
    ("eslm-stats-percentiles", "visualization", 32, 49, 16, 14),
]


def saved(kind: str, id_: str, attributes: dict, references: list | None = None) -> dict:
    return {"attributes": attributes, "coreMigrationVersion": CORE_MIGRATION, "id": id_, "managed": False,
            "references": references or [], "type": kind, "typeMigrationVersion": TYPE_MIGRATION[kind]}


def data_view(id_: str, index: str, name: str, formats: dict) -> dict:
    return saved("index-pattern", id_, {
        "allowHidden": False, "fieldAttrs": "{}", "fieldFormatMap": json.dumps(formats), "fields": "[]",
        "name": name, "runtimeFieldMap": "{}", "sourceFilters": "[]", "timeFieldName": "@timestamp",
        "title": index, "typeMeta": "{}"})


def search_source(query: str = "", language: str = "kuery", indexed: bool = True) -> str:
    source = {"query": {"query": query, "language": language}, "filter": []}
    if indexed:
        source["indexRefName"] = "kibanaSavedObjectMeta.searchSourceJSON.index"
    return json.dumps(source)


def view_reference(view: str) -> list:
    return [{"id": view, "name": "kibanaSavedObjectMeta.searchSourceJSON.index", "type": "index-pattern"}]


def vega_visualization(id_: str, vega: dict) -> dict:
    view = HISTORY_VIEW if vega["data"]["url"]["index"] == HISTORY else STATS_VIEW
    state = {"title": vega["title"], "type": "vega", "aggs": [], "params": {"spec": json.dumps(vega, indent=2)}}
    return saved("visualization", id_, {
        "description": "", "kibanaSavedObjectMeta": {"searchSourceJSON": search_source()},
        "title": vega["title"], "uiStateJSON": "{}", "version": 1, "visState": json.dumps(state)},
        view_reference(view))


def markdown() -> dict:
    state = {"title": "About this dashboard", "type": "markdown", "aggs": [],
             "params": {"fontSize": 12, "openLinksInNewTab": False, "markdown": README}}
    return saved("visualization", README_ID, {
        "description": "", "kibanaSavedObjectMeta": {"searchSourceJSON": search_source(indexed=False)},
        "title": "About this dashboard", "uiStateJSON": "{}", "version": 1, "visState": json.dumps(state)})


def trouble_search() -> dict:
    return saved("search", SEARCH_ID, {
        "columns": SEARCH_COLUMNS, "description": "Locks that ended other than by their holder, and refusals",
        "grid": {}, "hideChart": False, "isTextBasedQuery": False,
        "kibanaSavedObjectMeta": {"searchSourceJSON": search_source(SEARCH_QUERY, "lucene")},
        "sort": [["@timestamp", "desc"]], "title": "Lock trouble", "timeRestore": False},
        view_reference(HISTORY_VIEW))


def dashboard() -> dict:
    panels, references = [], []
    for i, (id_, kind, x, y, w, h) in enumerate(LAYOUT, start=1):
        index = str(i)
        panels.append({"version": "8.7.0", "type": kind, "gridData": {"x": x, "y": y, "w": w, "h": h, "i": index},
                       "panelIndex": index, "embeddableConfig": {"enhancements": {}},
                       "panelRefName": f"panel_{index}"})
        references.append({"id": id_, "name": f"{index}:panel_{index}", "type": kind})
    return saved("dashboard", "eslm-lock-manager", {
        "description": "Grants, releases and expiries over time, the longest holds, the most contended keys, "
                       "who waited longest (locks-history), and the nodes' lock stats (locks-stats)",
        "kibanaSavedObjectMeta": {"searchSourceJSON": search_source(indexed=False)},
        "optionsJSON": json.dumps({"useMargins": True, "syncColors": False, "syncCursor": True,
                                   "syncTooltips": False, "hidePanelTitles": False}),
        "panelsJSON": json.dumps(panels), "refreshInterval": {"pause": False, "value": 60000},
        "timeFrom": "now-24h", "timeRestore": True, "timeTo": "now", "title": "Lock manager", "version": 1},
        references)


def saved_objects() -> list[dict]:
    """Every object, those referred to before those that refer to them (as Kibana exports)."""
    return [
        data_view(HISTORY_VIEW, HISTORY, "Lock history",
                  {"event.duration": NANOS_AS_DURATION, "lock.wait.duration": NANOS_AS_DURATION}),
        data_view(STATS_VIEW, STATS, "Lock stats",
                  {**{f"locks.{t}_time_ms.{p}": MILLIS_AS_DURATION for t in ("wait", "hold")
                      for p in ("p50", "p90", "p99", "max")}, "locks.memory_bytes": {"id": "bytes"}}),
        markdown(),
        *[vega_visualization(id_, vega) for id_, vega in PANELS.items()],
        trouble_search(),
        dashboard(),
    ]


def ndjson() -> str:
    return "".join(json.dumps(o, sort_keys=True) + "\n" for o in saved_objects())


if __name__ == "__main__":
    OUT.write_text(ndjson())
    print(f"wrote {OUT} ({len(saved_objects())} saved objects)")
