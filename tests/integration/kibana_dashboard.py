"""The Kibana dashboard's file (docs/kibana/lock-manager-dashboard.ndjson) read as Kibana reads it,
and the Elasticsearch requests its panels run, derived from it as Kibana derives them — for
test_kibana_dashboard.py (the file) and test_history_stack.py (the requests, on a node).

The Vega panels' requests are their `data.url`, expanded as Kibana's Vega plugin expands it
(`EsQueryParser.parseUrl` and `_injectContextVars` in Kibana's
src/plugins/vis_types/vega/public/data_model/es_query_parser.ts): `%context%` becomes the
dashboard's query and filters (`buildEsQuery`: a bool of must, filter, should, must_not) with
the time range on `%timefield%` added to its `must`; `{"%timefilter%": "min"|"max"}` the range's
bound in ms; a date_histogram's `interval: {"%autointerval%": true}` a fixed or calendar
interval of about 50 buckets over the range. The saved search's request is Discover's in
substance: its Lucene query as a `query_string`, the filters and the time range, newest first.
"""

from __future__ import annotations

import copy
import datetime
import filecmp
import json
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NDJSON = ROOT / "docs" / "kibana" / "lock-manager-dashboard.ndjson"
DISCOVER_SAMPLE_SIZE = 500  # Discover's default sample size (discover:sampleSize)
DRAWER = Path(__file__).resolve().parent / "vega"  # draw.mjs and the Vega versions it draws with
DRAWING = ROOT / "build" / "kibana-vega"


def saved_objects() -> list[dict]:
    return [json.loads(line) for line in NDJSON.read_text().splitlines() if line.strip()]


def by_id() -> dict[str, dict]:
    return {o["id"]: o for o in saved_objects()}


def vis_state(obj: dict) -> dict:
    return json.loads(obj["attributes"]["visState"])


def vega_specs() -> dict[str, dict]:
    """Every Vega panel's spec by its visualization's id. (Kibana reads HJSON; the file's specs
    are JSON, which HJSON includes.)"""
    return {o["id"]: json.loads(vis_state(o)["params"]["spec"]) for o in saved_objects()
            if o["type"] == "visualization" and vis_state(o)["type"] == "vega"}


def dashboard_context(filters: list | None = None) -> dict:
    """What `buildEsQuery` makes of an empty query bar and `filters`."""
    return {"bool": {"must": [], "filter": list(filters or []), "should": [], "must_not": []}}


def _iso(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).isoformat(timespec="milliseconds") \
        .replace("+00:00", "Z")


def _range(bounds: tuple[int, int]) -> dict:
    return {"gte": _iso(bounds[0]), "lte": _iso(bounds[1]), "format": "strict_date_optional_time"}


_ROUND = [(500, "100ms"), (5000, "1s"), (7500, "5s"), (15000, "10s"), (45000, "30s"), (180000, "1m"),
          (450000, "5m"), (1200000, "10m"), (2700000, "30m"), (7200000, "1h"), (21600000, "3h"),
          (86400000, "12h"), (604800000, "24h"), (1814400000, "1w")]


def round_interval(ms: float) -> str:
    """Kibana's `EsQueryParser._roundInterval`."""
    for bound, interval in _ROUND:
        if ms <= bound:
            return interval
    return "30d" if ms < 3628800000 else "1y"


def date_histogram_interval(interval: str) -> dict:
    """Kibana's `dateHistogramInterval`: a calendar interval for one m, h, d, w, M or y (ms and s
    are always fixed), else a fixed one."""
    value, unit = re.fullmatch(r"(\d+)(ms|s|m|h|d|w|M|y)", interval).groups()
    calendar = unit in ("w", "M", "y") or (unit in ("m", "h", "d") and int(value) == 1)
    return {"calendar_interval": interval} if calendar else {"fixed_interval": interval}


def _inject(obj, bounds: tuple[int, int], key: str | None = None) -> None:
    if isinstance(obj, list):
        for item in obj:
            _inject(item, bounds)
        return
    if not isinstance(obj, dict):
        return
    for prop in list(obj):
        sub = obj[prop]
        if not sub:
            continue
        if prop == "interval" and key == "date_histogram":
            if isinstance(sub, str):
                interval = sub
            else:
                size = 50 if sub["%autointerval%"] is True else sub["%autointerval%"]
                interval = round_interval((bounds[1] - bounds[0]) / size)
            del obj["interval"]
            obj.update(date_histogram_interval(interval))
            continue
        if isinstance(sub, dict) and "%timefilter%" in sub:
            which = sub["%timefilter%"]
            assert which in ("min", "max", True), sub
            obj[prop] = bounds[0] if which == "min" else bounds[1] if which == "max" else _range(bounds)
            continue
        _inject(sub, bounds, prop)


def vega_request(spec: dict, bounds: tuple[int, int], context: dict | None = None) -> tuple[str, dict]:
    """(index, body) of the search a Vega spec's `data.url` makes Kibana send, for the time range
    `bounds` (epoch ms) and the dashboard's `context` (`dashboard_context`)."""
    url = copy.deepcopy(spec["data"]["url"])
    body = url.get("body", {})
    uses_context = "%context%" in url or "%timefield%" in url
    with_context, timefield = url.pop("%context%", None), url.pop("%timefield%", None)
    if "query" in body:
        assert not uses_context, "url.%context% and url.%timefield% must not be used when url.body.query is set"
        _inject(body["query"], bounds)
    elif uses_context:
        if timefield:
            body["query"] = {"range": {timefield: _range(bounds)}}
        if with_context:
            query = copy.deepcopy(context or dashboard_context())
            if timefield:
                query["bool"]["must"].append(body["query"])
            body["query"] = query
    _inject(body.get("aggs"), bounds)
    return url["index"], body


def discover_request(search: dict, index: str, bounds: tuple[int, int], filters: list | None = None) -> dict:
    """The body of the search a saved search with a Lucene query makes Discover send, in
    substance (Discover adds highlighting and field lists that change no hit)."""
    source = json.loads(search["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
    query = source["query"]
    assert query["language"] == "lucene", query
    must = [{"query_string": {"query": query["query"], "analyze_wildcard": True}}] if query["query"] else []
    return {"query": {"bool": {"must": must, "filter": [*(filters or []), {"range": {"@timestamp": _range(bounds)}}],
                               "should": [], "must_not": []}},
            "sort": [{"@timestamp": {"order": "desc", "unmapped_type": "boolean"}}],
            "size": DISCOVER_SAMPLE_SIZE, "fields": [{"field": c} for c in search["attributes"]["columns"]]}


def at_path(answer: dict, dotted: str):
    """What a Vega spec's `format.property` takes of an answer."""
    for part in dotted.split("."):
        answer = answer[part]
    return answer


def fields_named(body) -> set[str]:
    """Every field a request body names (`field`, sort keys, `_source` includes, term keys)."""
    found: set[str] = set()
    if isinstance(body, list):
        for item in body:
            found |= fields_named(item)
    elif isinstance(body, dict):
        for k, v in body.items():
            if k == "field" and isinstance(v, str):
                found.add(v)
            elif k in ("terms", "term", "prefix", "range") and isinstance(v, dict):
                found |= {f for f in v if f not in ("field", "size", "order")}
                found |= fields_named(v)
            elif k == "sort" and isinstance(v, list):
                found |= {f for s in v if isinstance(s, dict) for f in s}
            elif k == "includes" and isinstance(v, list):
                found |= set(v)
            else:
                found |= fields_named(v)
    return found


def draw(panels: list[tuple[str, dict, list]]) -> dict[str, dict]:
    """Draws each (id, spec, values) headless with Vega-Lite and Vega (tests/integration/vega:
    the versions pinned there, installed by `npm ci` into build/kibana-vega once), the data the
    panel's request got in place of its `data.url`. Answers per id the drawer's report: its
    `warnings`, the `items` drawn per data mark type, or an `error`."""
    DRAWING.mkdir(parents=True, exist_ok=True)
    fresh = not (DRAWING / "node_modules").is_dir() or not (DRAWING / "package-lock.json").exists() \
        or not filecmp.cmp(DRAWER / "package-lock.json", DRAWING / "package-lock.json", shallow=False)
    for name in ("package.json", "package-lock.json", "draw.mjs"):
        shutil.copyfile(DRAWER / name, DRAWING / name)
    if fresh:
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=DRAWING, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    payload = json.dumps([{"id": i, "spec": spec, "values": values} for i, spec, values in panels])
    done = subprocess.run(["node", "draw.mjs"], cwd=DRAWING, input=payload, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return {r["id"]: r for r in json.loads(done.stdout)}
