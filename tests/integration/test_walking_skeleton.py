"""The thinnest complete path, end to end: HTTP -> REST handler -> transport action -> JNI ->
Rust core and back, on a real node with the plugin installed by the real install command."""

from __future__ import annotations

import subprocess
import uuid

import pytest

import node as esnode

pytestmark = pytest.mark.every_version  # also on 8.19 (Makefile integration-test)


def key() -> str:
    return f"skeleton-{uuid.uuid4().hex[:8]}"


def error_of(response) -> dict:
    body = response.json()
    assert "error" in body, body
    return body["error"]


def test_plugin_is_installed_by_the_real_cli(single_node):
    listed = subprocess.run(
        [str(single_node.es / "bin" / "elasticsearch-plugin"), "list"],
        env=single_node._env(), capture_output=True, text=True, check=True,
    ).stdout.split()
    assert "lock-manager" in listed


def test_two_owners_contend_reacquire_release_and_token_grows(client):
    k = key()
    first = client.post(f"/_locks/{k}/_acquire", {"owner": "alice", "acquisition": "alice"})
    assert first.status_code == 200, first.text
    grant = first.json()
    assert grant["acquired"] is True and grant["owner"] == "alice" and grant["mode"] == "exclusive"
    token1 = grant["fencing_token"]

    busy = client.post(f"/_locks/{k}/_acquire", {"owner": "bob", "acquisition": "bob"})
    assert busy.status_code == 409, busy.text
    err = error_of(busy)
    assert err["type"] == "lock_conflict_exception"
    assert "alice" in err["reason"] and err["holders"] in ("alice", ["alice"])

    again = client.post(f"/_locks/{k}/_acquire", {"owner": "alice", "acquisition": "alice"})
    assert again.status_code == 200
    assert again.json()["fencing_token"] == token1, "idempotent re-acquire keeps the token"
    assert again.json()["reentrant"] is True

    not_holder = client.post(f"/_locks/{k}/_release", {"owner": "bob", "acquisition": "bob"})
    assert not_holder.status_code == 404, not_holder.text
    assert error_of(not_holder)["type"] == "lock_not_held_exception"

    stale = client.post(f"/_locks/{k}/_release", {"owner": "alice", "acquisition": "alice", "fencing_token": token1 + 1})
    assert stale.status_code == 404, "a wrong token never releases"

    released = client.post(f"/_locks/{k}/_release", {"owner": "alice", "acquisition": "alice", "fencing_token": token1})
    assert released.status_code == 200, released.text
    assert released.json()["released"] is True

    second = client.post(f"/_locks/{k}/_acquire", {"owner": "bob", "acquisition": "bob"})
    assert second.status_code == 200, second.text
    assert second.json()["fencing_token"] > token1

    info = client.get(f"/_locks/{k}").json()
    assert [h["owner"] for h in info["holders"]] == ["bob"]
    assert info["holders"][0]["fencing_token"] == second.json()["fencing_token"]
    assert info["holders"][0]["node"] == "node-0"


def test_free_key_answers_200_with_no_holders(client):
    r = client.get(f"/_locks/{key()}")
    assert r.status_code == 200
    assert r.json()["holders"] == []


@pytest.mark.parametrize(
    "body, raw, error_type, named",
    [
        ({"owner": "a", "ownr": "b"}, None, "x_content_parse_exception", "unknown field [ownr]"),
        (None, '{"owner": ', "x_content_e_o_f_exception", "[1:"),
        (None, "not json at all", "x_content_parse_exception", ""),
        ({}, None, "illegal_argument_exception", "[owner] is required"),
        ({"owner": 17}, None, "x_content_parse_exception", "owner"),
        ({"owner": "   "}, None, "illegal_argument_exception", "[owner]"),
        ({"owner": "a\nb"}, None, "illegal_argument_exception", "[owner]"),
        ({"owner": "a" * 513}, None, "illegal_argument_exception", "[owner]"),
        ({"owner": "a", "mode": "sideways"}, None, "illegal_argument_exception", "[mode]"),
        (None, "", "illegal_argument_exception", "request body is required"),
    ],
)
def test_bad_acquire_bodies_get_400_naming_the_field(client, body, raw, error_type, named):
    k = key()
    r = client.post(f"/_locks/{k}/_acquire", body, raw=raw)
    assert r.status_code == 400, r.text
    err = error_of(r)
    assert err["type"] == error_type, err  # the one docs/API.md "Errors" names
    text = r.text
    assert named in text, text
    assert client.get(f"/_locks/{k}").json()["holders"] == [], "bad input changed no state"


def test_oversized_key_is_400_naming_the_key(client):
    r = client.post(f"/_locks/{'k' * 513}/_acquire", {"owner": "a", "acquisition": "a"})
    assert r.status_code == 400, r.text
    assert error_of(r)["reason"].startswith("[key]")


def test_bad_release_bodies_get_400(client):
    k = key()
    assert client.post(f"/_locks/{k}/_acquire", {"owner": "a", "acquisition": "a"}).status_code == 200
    for body in ({}, {"owner": "a", "token": 1}, {"owner": "a", "fencing_token": -5},
                 {"owner": "a", "fencing_token": "x"}):
        r = client.post(f"/_locks/{k}/_release", body)
        assert r.status_code == 400, (body, r.text)
    assert [h["owner"] for h in client.get(f"/_locks/{k}").json()["holders"]] == ["a"]


def test_node_log_shows_the_native_library_loaded_and_rust_logging(single_node):
    log = single_node.log_file.read_text(errors="replace")
    assert "loaded native lock library [eslm-bridge" in log
    assert "lock core created" in log, "Rust tracing lines reach the node's log"


def test_diagnostics_report_versions_and_lock_count(client):
    before = client.get("/_locks/_node/diagnostics").json()
    assert before["plugin"]["elasticsearch_version"] == esnode.es_version()
    assert before["core"]["core_version"]
    assert before["plugin"]["native_library"].endswith("native/linux-x86_64/libeslm.so")
    k = key()
    assert client.post(f"/_locks/{k}/_acquire", {"owner": "d", "acquisition": "d"}).status_code == 200
    after = client.get("/_locks/_node/diagnostics").json()
    held = lambda d: sum(p["held"] for p in d["core"]["partitions"])  # noqa: E731
    assert held(after) == held(before) + 1


def test_fencing_token_as_external_version_refuses_a_stale_holders_write(client):
    k = key()
    index = f"fenced-{uuid.uuid4().hex[:6]}"
    old = client.post(f"/_locks/{k}/_acquire", {"owner": "old", "acquisition": "old"}).json()["fencing_token"]
    assert client.post(f"/_locks/{k}/_release", {"owner": "old", "acquisition": "old"}).status_code == 200
    new = client.post(f"/_locks/{k}/_acquire", {"owner": "new", "acquisition": "new"}).json()["fencing_token"]
    assert new > old

    def write(token: int, who: str):
        return client.request(
            "PUT", f"/{index}/_doc/{k}?version={token}&version_type=external_gte", {"by": who}
        )

    assert write(new, "new").status_code in (200, 201)
    stale = write(old, "old")
    assert stale.status_code == 409, stale.text
    assert stale.json()["error"]["type"] == "version_conflict_engine_exception"
    doc = client.get(f"/{index}/_doc/{k}").json()
    assert doc["_source"] == {"by": "new"} and doc["_version"] == new
