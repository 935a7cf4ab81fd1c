"""Fenced changes to protected documents (docs/API.md "Fenced changes", issue 48 item 1): the
plugin's update script (`"lang": "eslm", "source": "fence"`) applies a change only when its token
is at least the highest token that changed the document, on the document's primary, in one
`_update`. Each interleaving below is played out step by step against a real node with tokens
from real grants: the plain recipe (a read, then a write with `version_type=external_gte`) is
shown to lose an acknowledged update and to let a stale write re-create a deleted document; the
fenced calls keep both."""

from __future__ import annotations

import json
import uuid

import pytest

from lockclient import wait_until

pytestmark = pytest.mark.every_version  # the script engine's API is Elasticsearch's (Makefile integration-test)

FENCE = "eslm_fence"


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def update_body(token: int, key: str, **change) -> dict:
    """The body of a fenced `_update` (or a bulk `update` action's second line), as the clients send it."""
    return {
        "script": {"lang": "eslm", "source": "fence", "params": {"token": token, "key": key, **change}},
        "scripted_upsert": True,
        "upsert": {},
        "_source": True,
    }


def fenced(client, index: str, doc_id: str, token: int, key: str, **change) -> dict:
    """One fenced change: its answer, with `stale` when a newer token had changed the document."""
    r = client.post(f"/{index}/_update/{doc_id}?retry_on_conflict=3&refresh=true", update_body(token, key, **change))
    assert r.status_code in (200, 201), r.text
    answer = r.json()
    fence = answer["get"]["_source"][FENCE]["token"]
    answer["stale"] = answer["result"] == "noop" and fence > token
    return answer


def source(answer: dict) -> dict:
    """The document a fenced change left, without its fence (a tombstone: None)."""
    doc = dict(answer["get"]["_source"])
    fence = doc.pop(FENCE)
    return None if fence.get("deleted") else doc


def grant(client, key: str, owner: str, lease: str = "30s") -> int:
    r = client.post(f"/_locks/{key}/_acquire", {"owner": owner, "acquisition": owner, "lease": lease})
    assert r.status_code == 200, r.text
    return r.json()["fencing_token"]


def lease_runs_out(client, key: str, owner: str) -> None:
    """The holder `owner` paused past its lease: wait until the server ended its grant."""
    wait_until(
        lambda: all(h["owner"] != owner for h in client.get(f"/_locks/{key}").json()["holders"]),
        30, interval=0.05, message=f"{owner}'s lease to run out",
    )


def two_holders(client) -> tuple[str, int, int]:
    """A key whose first holder's lease ran out and a second holder took it: (key, old, new)."""
    k = name("fenced")
    old = grant(client, k, "paused", lease="300ms")
    lease_runs_out(client, k, "paused")
    new = grant(client, k, "next")
    assert new > old
    return k, old, new


def plain_read(client, index: str, doc_id: str) -> dict:
    return client.get(f"/{index}/_doc/{doc_id}").json()["_source"]


def plain_write(client, index: str, doc_id: str, token: int, doc: dict):
    return client.request("PUT", f"/{index}/_doc/{doc_id}?version={token}&version_type=external_gte&refresh=true", doc)


def test_the_plain_recipe_loses_an_acknowledged_increment_the_fenced_one_refuses_the_stale_write(client):
    index, k_setup = name("counters"), name("setup")
    setup = grant(client, k_setup, "setup")
    for recipe in ("plain", "fenced"):
        k, old, new = two_holders(client)
        doc_id = recipe
        if recipe == "plain":
            assert plain_write(client, index, doc_id, setup, {"n": 0}).status_code in (200, 201)
            paused_read = plain_read(client, index, doc_id)           # the paused holder read n=0
            next_read = plain_read(client, index, doc_id)             # the next holder reads n=0
            stale = plain_write(client, index, doc_id, old, {"n": paused_read["n"] + 1})
            assert stale.status_code in (200, 201), "the stale write lands between the next holder's read and write"
            acknowledged = 2
            assert plain_write(client, index, doc_id, new, {"n": next_read["n"] + 1}).status_code in (200, 201)
            final = plain_read(client, index, doc_id)["n"]
            assert final == 1 and acknowledged == 2, "the plain recipe lost an acknowledged increment"
        else:
            assert not fenced(client, index, doc_id, old, k, replace={"n": 0})["stale"]
            paused_read = source(fenced(client, index, doc_id, old, k))   # a fenced read: raises the fence to old
            next_read = source(fenced(client, index, doc_id, new, k))     # ... and the next holder's to new
            stale = fenced(client, index, doc_id, old, k, replace={"n": paused_read["n"] + 1})
            assert stale["stale"] and stale["result"] == "noop", stale
            written = fenced(client, index, doc_id, new, k, replace={"n": next_read["n"] + 1})
            assert written["result"] == "updated" and source(written) == {"n": 1}
            final = plain_read(client, index, doc_id)
            assert final == {"n": 1, FENCE: {"token": new, "key": k}}, "one acknowledged increment, one refused"


def test_field_operations_count_on_the_primary_so_no_increment_needs_a_read(client):
    index = name("ops")
    k, old, new = two_holders(client)
    ops = [{"op": "inc", "field": "n", "value": 1}, {"op": "append", "field": "by", "value": "x"}]
    first = fenced(client, index, "c", old, k, ops=ops)
    assert first["result"] == "created" and source(first) == {"n": 1, "by": ["x"]}
    assert fenced(client, index, "c", new, k, ops=ops)["result"] == "updated"
    stale = fenced(client, index, "c", old, k, ops=ops)
    assert stale["stale"], stale
    again = fenced(client, index, "c", new, k, ops=[{"op": "set", "field": "meta.last", "value": "next"}])
    assert source(again) == {"n": 2, "by": ["x", "x"], "meta": {"last": "next"}}


def test_a_fenced_delete_keeps_refusing_the_stale_holder_after_elasticsearch_forgets_its_tombstone(client):
    """`index.gc_deletes: 0s`: Elasticsearch forgets a delete's version at once (after 60 s by
    default). A plain delete then lets the stale holder's external_gte write re-create the
    document; the fenced delete's tombstone keeps the fence."""
    index = name("deletes")
    r = client.request("PUT", f"/{index}", {"settings": {"index.gc_deletes": "0s", "number_of_replicas": 0}})
    assert r.status_code == 200, r.text
    k, old, new = two_holders(client)
    assert plain_write(client, index, "plain", old, {"v": "old"}).status_code in (200, 201)
    deleted = client.request("DELETE", f"/{index}/_doc/plain?version={new}&version_type=external_gte&refresh=true")
    assert deleted.status_code == 200, deleted.text
    wait_until(lambda: plain_write(client, index, "plain", old, {"v": "stale"}).status_code in (200, 201), 30,
               interval=0.2, message="the stale write to re-create the plainly deleted document")
    assert plain_read(client, index, "plain") == {"v": "stale"}, "the plain recipe let the stale holder back in"

    assert not fenced(client, index, "fenced", old, k, replace={"v": "old"})["stale"]
    tombstone = fenced(client, index, "fenced", new, k, delete=True)
    assert source(tombstone) is None and tombstone["get"]["_source"][FENCE] == {"token": new, "key": k, "deleted": True}
    stale = fenced(client, index, "fenced", old, k, replace={"v": "stale"})
    assert stale["stale"], stale
    recreated = fenced(client, index, "fenced", new, k, doc={"v": "again"})
    assert source(recreated) == {"v": "again"}


def test_fenced_changes_in_bulk_each_fenced_on_its_own(client):
    index = name("bulk")
    k, old, new = two_holders(client)
    assert fenced(client, index, "a", new, k, doc={"n": 1})["result"] == "created"
    lines = []
    for doc_id, token in (("a", old), ("b", old), ("a", new)):
        lines += [{"update": {"_index": index, "_id": doc_id, "retry_on_conflict": 3}},
                  update_body(token, k, ops=[{"op": "inc", "field": "n", "value": 1}])]
    body = "\n".join(json.dumps(line) for line in lines) + "\n"
    r = client.request("POST", "/_bulk?refresh=true", raw=body)
    assert r.status_code == 200, r.text
    items = [item["update"] for item in r.json()["items"]]
    assert [i["result"] for i in items] == ["noop", "created", "updated"], items
    assert items[0]["get"]["_source"][FENCE]["token"] == new, "the first is stale: a newer token wrote [a]"
    assert plain_read(client, index, "a")["n"] == 2 and plain_read(client, index, "b")["n"] == 1


@pytest.mark.parametrize("params, field", [
    ({"key": "k"}, "[token] is required"),
    ({"token": 0, "key": "k"}, "[token] must be a fencing token"),
    ({"token": 1}, "[key] is required"),
    ({"token": 1, "key": "k", "doc": {"a": 1}, "delete": True}, "[params] a fenced change takes one of"),
    ({"token": 1, "key": "k", "doc": {FENCE: 1}}, f"[doc] must not set [{FENCE}]"),
    ({"token": 1, "key": "k", "ops": [{"op": "inc", "field": "n"}]}, "[ops] entry 0: [value] of [inc] must be a number"),
    ({"token": 1, "key": "k", "tokn": 1}, "unknown parameter [tokn]"),
])
def test_a_bad_fenced_change_is_refused_naming_the_field(client, params, field):
    r = client.post(f"/{name('bad')}/_update/1", {"script": {"lang": "eslm", "source": "fence", "params": params},
                                                   "scripted_upsert": True, "upsert": {}})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["type"] == "illegal_argument_exception" and field in error["caused_by"]["reason"], error


def test_a_token_of_another_lock_and_an_unknown_script_are_refused(client):
    index = name("keys")
    k, old, new = two_holders(client)
    assert fenced(client, index, "d", new, k, doc={"a": 1})["result"] == "created"
    other = client.post(f"/{index}/_update/d", update_body(new + 1, "another-key", doc={"a": 2}))
    assert other.status_code == 400 and "not the lock that fences this document" in other.text, other.text
    unknown = client.post(f"/{index}/_update/d", {"script": {"lang": "eslm", "source": "inc", "params": {}}})
    assert unknown.status_code == 400 and "has one script, [fence]" in unknown.text, unknown.text
