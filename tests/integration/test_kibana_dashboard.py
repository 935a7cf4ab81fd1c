"""The Kibana dashboard's file, docs/kibana/lock-manager-dashboard.ndjson (issue 50 item 4), checked
without Kibana and without a node: it is what docs/kibana/dashboard.py writes; every line a saved
object of a type Kibana 8.19 and 9.x import (data views, visualizations, a saved search, the
dashboard) with the migration versions an import migrates from; ids unique, every reference
resolved to an object of the file of its type; the dashboard's panels each referenced and laid
out on Kibana's 48-column grid without overlap; every Vega-Lite panel's request in its
`data.url`, on a data view of the file, in the dashboard's context. Whether Kibana imports it is
not tested here (no Kibana runs on this machine); the requests the panels run are, on a node, by
test_history_stack.py.
"""

from __future__ import annotations

import importlib.util
import json

import kibana_dashboard as kd

TYPES = {"index-pattern", "visualization", "search", "dashboard"}


def generator():
    spec = importlib.util.spec_from_file_location("dashboard", kd.ROOT / "docs" / "kibana" / "dashboard.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_file_is_what_the_generator_writes():
    assert kd.NDJSON.read_text() == generator().ndjson(), "run python3 docs/kibana/dashboard.py"


def test_every_line_is_a_saved_object_kibana_imports_with_its_references_resolved():
    objects = kd.saved_objects()
    ids = [(o["type"], o["id"]) for o in objects]
    assert len(ids) == len(set(ids)), ids
    known = set(ids)
    for o in objects:
        assert o["type"] in TYPES, o["type"]
        assert set(o) >= {"id", "type", "attributes", "references", "coreMigrationVersion", "typeMigrationVersion"}, o
        assert o["coreMigrationVersion"] == "8.8.0", o["id"]
        assert tuple(map(int, o["typeMigrationVersion"].split("."))) <= (8, 8, 0), o["id"]
        names = [r["name"] for r in o["references"]]
        assert len(names) == len(set(names)), o["id"]
        for r in o["references"]:
            assert (r["type"], r["id"]) in known, (o["id"], r)
        meta = o["attributes"].get("kibanaSavedObjectMeta")
        if meta:
            source = json.loads(meta["searchSourceJSON"])
            if "indexRefName" in source:
                assert source["indexRefName"] in names, o["id"]
    referred = {(r["type"], r["id"]) for o in objects for r in o["references"]}
    assert known - referred == {("dashboard", "eslm-lock-manager")}, "every object belongs to the dashboard"


def test_the_data_views_name_the_history_and_the_stats():
    views = {o["attributes"]["title"]: o["attributes"] for o in kd.saved_objects() if o["type"] == "index-pattern"}
    assert set(views) == {"locks-history", "locks-stats"}
    for view in views.values():
        assert view["timeFieldName"] == "@timestamp"
        json.loads(view["fieldFormatMap"])
    formats = json.loads(views["locks-history"]["fieldFormatMap"])
    assert formats["event.duration"]["params"]["inputFormat"] == "nanoseconds", "ECS durations"


def test_the_dashboard_references_every_panel_and_lays_them_out_without_overlap():
    objects = kd.by_id()
    board = objects["eslm-lock-manager"]
    panels = json.loads(board["attributes"]["panelsJSON"])
    references = {r["name"]: r for r in board["references"]}
    cells = set()
    for p in panels:
        ref = references[f"{p['panelIndex']}:{p['panelRefName']}"]
        assert ref["type"] == p["type"] == objects[ref["id"]]["type"], p
        g = p["gridData"]
        assert g["i"] == p["panelIndex"] and 0 <= g["x"] and g["x"] + g["w"] <= 48 and g["h"] > 0, g
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & mine, f"panel {p['panelIndex']} overlaps another"
        cells |= mine
    assert len(panels) == len(references) == len(board["references"])
    json.loads(board["attributes"]["optionsJSON"])


def test_every_vega_panel_has_its_request_in_the_file_on_a_data_view_of_it():
    objects = kd.by_id()
    specs = kd.vega_specs()
    assert len(specs) == 8, sorted(specs)
    for id_, spec in specs.items():
        assert spec["$schema"] == "https://vega.github.io/schema/vega-lite/v5.json", id_
        url = spec["data"]["url"]
        view = objects[objects[id_]["references"][0]["id"]]
        assert url["index"] == view["attributes"]["title"], id_
        assert url["%context%"] is True and url["%timefield%"] == "@timestamp", id_
        assert "query" not in url["body"], "the dashboard's query and time range, not one of its own"
        assert spec["data"]["format"]["property"].startswith("aggregations."), id_
        assert kd.vis_state(objects[id_])["title"] == spec["title"] == objects[id_]["attributes"]["title"]


def test_kibanas_expansion_of_a_url_as_the_tests_do_it():
    """The expansion test_history_stack.py runs, on a hand-made url: the time range in `must`,
    the filters kept, the automatic interval of Kibana's table (24 h / 50 -> 30m), the bounds."""
    day = 86_400_000
    spec = {"data": {"url": {"index": "i", "%context%": True, "%timefield%": "@timestamp", "body": {"aggs": {"t": {
        "date_histogram": {"field": "@timestamp", "interval": {"%autointerval%": True},
                           "extended_bounds": {"min": {"%timefilter%": "min"}, "max": {"%timefilter%": "max"}}}}}}}}}
    index, body = kd.vega_request(spec, (0, day), kd.dashboard_context([{"term": {"a": 1}}]))
    assert index == "i"
    assert body["query"]["bool"]["filter"] == [{"term": {"a": 1}}]
    assert body["query"]["bool"]["must"] == [{"range": {"@timestamp": {
        "gte": "1970-01-01T00:00:00.000Z", "lte": "1970-01-02T00:00:00.000Z", "format": "strict_date_optional_time"}}}]
    histogram = body["aggs"]["t"]["date_histogram"]
    assert histogram["fixed_interval"] == "30m" and "interval" not in histogram
    assert histogram["extended_bounds"] == {"min": 0, "max": day}
    assert kd.date_histogram_interval("1h") == {"calendar_interval": "1h"}
    assert kd.date_histogram_interval("24h") == {"fixed_interval": "24h"}
    assert kd.round_interval(2400) == "1s"
