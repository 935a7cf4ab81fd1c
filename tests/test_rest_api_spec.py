"""The rest-api-spec files (rest-api-spec/api/*.json) are valid specs in Elasticsearch's format
and match docs/API.md one to one. No node needed.

The structural rules are those of Elasticsearch's rest-api-spec schema
(rest-api-spec/src/main/resources/schema.json in elastic/elasticsearch), checked by hand so no
JSON-schema library is needed. docs/API.md lists each endpoint as a heading
"### `METHOD /path`"; every (method, path) of every spec must have such a heading and every such
heading must be covered by a spec. The plugin's REST routes must match the specs too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT / "rest-api-spec" / "api"
API_MD = ROOT / "docs" / "API.md"

API_NAME = re.compile(r"^(?:[a-z]+?(_[a-z]+)*(\.[a-z]+?(_[a-z]+)*)?|_internal\.[a-z]+?(_[a-z]+)*)$")
PARAM_NAME = re.compile(r"^_?[a-z]+?(_[a-z]+)*$")
PATH = re.compile(r"^/([a-z0-9/_{}])*$")
PARAM_TYPES = {"list", "date", "time", "string", "enum", "int", "double", "float", "long", "boolean"}
METHODS = {"DELETE", "GET", "HEAD", "POST", "PUT"}
COMPONENT_KEYS = {"deprecated", "documentation", "stability", "visibility", "feature_flag",
                  "headers", "url", "params", "body"}
DOC_HEADING = re.compile(r"^#{2,4}\s+`(GET|POST|PUT|DELETE|HEAD) (/[^`\s?]*)`\s*$", re.M)

EXPECTED = {
    "locks.acquire", "locks.release", "locks.renew", "locks.downgrade", "locks.multi_acquire", "locks.multi_release",
    "locks.session_create", "locks.session_keepalive", "locks.session_delete", "locks.get",
    "locks.list", "cat.locks", "locks.stats", "locks.node_diagnostics", "locks.diagnostics", "locks.force_release",
    "semaphores.acquire", "semaphores.release", "semaphores.renew", "semaphores.limit", "semaphores.get", "cat.semaphores",
    "locks.watch",
    "elections.campaign", "elections.resign", "elections.renew", "elections.get", "elections.observe",
    "cat.elections",
    "groups.create", "groups.delete", "groups.list", "groups.get", "groups.observe", "groups.join",
    "groups.leave", "groups.heartbeat", "groups.update",
}


def spec_files() -> list[Path]:
    return sorted(SPEC_DIR.glob("*.json"))


def load(path: Path) -> tuple[str, dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and len(data) == 1, f"{path.name}: one API per file"
    ((name, api),) = data.items()
    return name, api


def spec_endpoints() -> set[tuple[str, str]]:
    out = set()
    for f in spec_files():
        _, api = load(f)
        for p in api["url"]["paths"]:
            for m in p["methods"]:
                out.add((m, p["path"]))
    return out


def doc_endpoints() -> set[tuple[str, str]]:
    return {(m, p) for m, p in DOC_HEADING.findall(API_MD.read_text(encoding="utf-8"))}


def check_param(where: str, name: str, param: dict) -> None:
    assert PARAM_NAME.match(name), f"{where}: bad name {name!r}"
    assert isinstance(param, dict), where
    assert set(param) <= {"type", "options", "default", "deprecated", "description", "required",
                          "visibility", "feature_flag"}, f"{where}.{name}: {sorted(param)}"
    assert param.get("type") in PARAM_TYPES, f"{where}.{name}: type {param.get('type')!r}"
    assert isinstance(param.get("description"), str) and param["description"], f"{where}.{name}"
    if param["type"] == "enum":
        options = param.get("options")
        assert isinstance(options, list) and options, f"{where}.{name}: enum without options"
        assert all(isinstance(o, str) and re.fullmatch(r"[a-zA-Z_]+", o) for o in options)
        if "default" in param:
            assert param["default"] in options, f"{where}.{name}: default not an option"
    if "default" in param:
        assert isinstance(param["default"], (str, int, float, bool)), f"{where}.{name}"
    if "required" in param:
        assert isinstance(param["required"], bool)


def test_there_is_a_spec_for_every_endpoint():
    names = {load(f)[0] for f in spec_files()}
    assert names == EXPECTED


@pytest.mark.parametrize("path", spec_files(), ids=lambda p: p.name)
def test_spec_file_is_a_valid_rest_api_spec(path: Path):
    name, api = load(path)
    assert path.name == f"{name}.json", "the file is named after its API"
    assert API_NAME.match(name), name
    assert set(api) <= COMPONENT_KEYS, sorted(set(api) - COMPONENT_KEYS)
    for required in ("documentation", "stability", "visibility", "headers", "url"):
        assert required in api, f"{name}: missing {required}"

    doc = api["documentation"]
    assert set(doc) == {"url", "description"} and isinstance(doc["description"], str)
    assert doc["description"].strip()
    assert api["stability"] in ("stable", "beta", "experimental")
    if api["stability"] == "stable":
        assert isinstance(doc["url"], str)
    assert doc["url"] is None or re.match(r"^https?://", doc["url"])
    assert api["visibility"] in ("private", "feature_flag", "public")
    if api["visibility"] == "feature_flag":
        assert "feature_flag" in api

    headers = api["headers"]
    assert set(headers) <= {"accept", "content_type"} and headers.get("accept")
    assert all(isinstance(h, str) and h for v in headers.values() for h in v)

    url = api["url"]
    assert set(url) == {"paths"} and isinstance(url["paths"], list) and url["paths"]
    for p in url["paths"]:
        assert set(p) <= {"path", "methods", "parts", "deprecated"} and {"path", "methods"} <= set(p)
        assert PATH.match(p["path"]), f"{name}: path {p['path']!r}"
        assert p["methods"] and set(p["methods"]) <= METHODS, p["methods"]
        placeholders = set(re.findall(r"{([^}]+)}", p["path"]))
        parts = p.get("parts", {})
        assert set(parts) == placeholders, f"{name}: parts {sorted(parts)} vs {p['path']}"
        for part_name, part in parts.items():
            check_param(f"{name}.parts", part_name, part)

    for param_name, param in api.get("params", {}).items():
        check_param(f"{name}.params", param_name, param)

    body = api.get("body")
    if body is not None:
        assert set(body) <= {"description", "required", "serialize"} and body.get("description")
        assert isinstance(body.get("required", False), bool)
        assert "content_type" in headers, f"{name}: an API with a body documents its content type"
    methods = {m for p in url["paths"] for m in p["methods"]}
    # A DELETE may take a body (Elasticsearch's own clear_scroll and security.invalidate_api_key
    # do; locks.session_delete names the session's owner in one); our GETs take none.
    if methods <= {"GET", "HEAD"}:
        assert body is None, f"{name}: {sorted(methods)} takes no body"


def test_every_spec_path_is_documented_in_api_md():
    missing = spec_endpoints() - doc_endpoints()
    # a spec may list an extra path variant documented in prose under its main heading
    text = API_MD.read_text(encoding="utf-8")
    missing = {(m, p) for m, p in missing if f"`{m} {p}`" not in text}
    assert not missing, f"in rest-api-spec but not in docs/API.md: {sorted(missing)}"


def test_every_endpoint_in_api_md_has_a_spec():
    documented = doc_endpoints()
    assert len(documented) >= len(EXPECTED), "docs/API.md has one heading per endpoint"
    missing = documented - spec_endpoints()
    assert not missing, f"in docs/API.md but no rest-api-spec file: {sorted(missing)}"


def test_api_md_documents_settings_and_the_fencing_recipe():
    text = API_MD.read_text(encoding="utf-8")
    for setting in ("locks.lease.default", "locks.lease.max", "locks.wait.default",
                    "locks.wait.max", "locks.priority.aging", "locks.max_waiters",
                    "locks.max_keys_per_request", "locks.partitions", "locks.durability",
                    "locks.limits.max_locks", "locks.limits.max_sessions", "locks.limits.max_waiters",
                    "locks.limits.max_locks_per_owner", "locks.limits.max_waiters_per_owner",
                    "locks.limits.max_sessions_per_owner", "locks.limits.max_memory"):
        assert f"`{setting}`" in text, setting
    assert "version_type=external_gte" in text
    assert text.count("curl ") >= len(EXPECTED), "a curl example per endpoint"


def test_every_rest_route_of_the_plugin_has_a_spec_and_back():
    """The REST handlers' routes (java/src/main/java/org/eslm/rest) are exactly the spec paths."""
    route = re.compile(r'new Route\(\s*(GET|POST|PUT|DELETE|HEAD)\s*,\s*"([^"]+)"\s*\)')
    routes = set()
    for java in (ROOT / "java" / "src" / "main" / "java" / "org" / "eslm" / "rest").glob("*.java"):
        routes |= set(route.findall(java.read_text(encoding="utf-8")))
    assert len(routes) >= len(EXPECTED), \
        f"found only {sorted(routes)}: are routes still declared as `new Route(METHOD, \"/path\")`?"
    assert routes == spec_endpoints(), (
        f"routes without a spec: {sorted(routes - spec_endpoints())}; "
        f"specs without a route: {sorted(spec_endpoints() - routes)}")


def index_names(markdown: str) -> set[str]:
    """The spec names in the spec column of docs/API.md's index table (`locks.get`, `groups.*`)."""
    names = set()
    for line in markdown.split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[1].startswith("[`"):
            names |= set(re.findall(r"`([a-z_]+\.[a-z_*]+)`", cells[2]))
    return names


def indexed(name: str, names: set[str]) -> bool:
    return name in names or f"{name.split('.')[0]}.*" in names


def test_every_endpoint_is_in_the_index_of_api_md():
    """Issue 39: the index at the top of docs/API.md names every spec (so every REST route of the
    plugin, which the test above matches to the specs), one by one or as `family.*`."""
    names = index_names(API_MD.read_text())
    assert sorted(n for n in EXPECTED if not indexed(n, names)) == []
    assert not indexed("locks.gone", names) and indexed("groups.join", names)
