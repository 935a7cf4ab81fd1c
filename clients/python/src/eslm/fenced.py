"""Fenced changes to the documents a lock protects (docs/API.md "Fenced changes"), as steps (see
steps.py) shared by the sync and the asyncio client.

A fenced change is an `_update` that runs the plugin's update script (`"lang": "eslm", "source":
"fence"`) with the held lock's token and key: on the document's primary, in the same operation as
the change, it applies the change only when the token is at least the highest that changed the
document (kept in the document's `eslm_fence`), and otherwise makes the update a `noop`. The
answer carries the document with its fence (`"_source": true`), which tells an applied change
from a stale one: `noop` with a larger fence token than ours is stale, and raises `StaleToken`.

- A partial document merges (`doc`), a list of field operations (eslm/ops.py) runs on the
  primary's copy (`ops`), the delete marker leaves a tombstone (`delete`).
- A read-modify-write with a function: a fenced read first (the update with no change, which
  raises the fence to our token and answers the source: from then on a stale holder's write is
  refused, and one that landed before is in what we read), then the function's result written
  whole (`replace`) with the same token, refused if a newer holder came in between.
- Many changes in one `_bulk`, each fenced on its own, answered per item."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import quote, urlencode

from . import errors, ops
from .ops import FENCE_FIELD
from .steps import NDJSON_HEADERS, Call, Steps

# Elasticsearch re-runs the read-script-write on the primary when another write of the same
# document got in between; 3 times is plenty (docs/API.md "Fenced changes").
RETRY_ON_CONFLICT = 3


@dataclass(frozen=True)
class Fence:
    """The lock a change is fenced by: its key and fencing token."""

    key: str
    token: int


@dataclass(frozen=True)
class FencedResult:
    """One item of `held.bulk(...)`: `outcome` is `"applied"` (the change is in the document,
    or left it as it was), `"stale"` (a newer holder had changed the document: nothing written;
    `error` is the `StaleToken`) or `"failed"` (`error` is the server's error for this item, e.g.
    `IllegalArgument` for an `inc` of text: nothing written). `source` is the document as it now
    stands, without its fence (None for a tombstone, or when not applied); `fence` the document's
    fence token (the newer holder's when stale; None when failed)."""

    index: str
    id: str
    outcome: str
    source: dict | None = None
    fence: int | None = None
    error: errors.LockError | None = None

    @property
    def applied(self) -> bool:
        """Whether the change is in the document."""
        return self.outcome == "applied"

    @property
    def stale(self) -> bool:
        """Whether a newer holder's token refused it."""
        return self.outcome == "stale"

    @property
    def failed(self) -> bool:
        """Whether the server refused it for another reason (`error`)."""
        return self.outcome == "failed"


def update_body(fence: Fence, change: dict) -> dict:
    """The body of a fenced `_update` (also a bulk `update` action's second line)."""
    return {
        "script": {"lang": "eslm", "source": "fence", "params": {"token": fence.token, "key": fence.key, **change}},
        "scripted_upsert": True,
        "upsert": {},
        "_source": True,
    }


def change_params(change: Any, where: str = "[change]") -> dict:
    """The script's params for `change`: a mapping is a partial document (`doc`), a list or tuple
    field operations (`ops`), `ops.DELETE` a delete. Anything else, or a document that sets the
    fence, is refused with `InvalidArgument` before anything is sent."""
    if change is ops.DELETE:
        return {"delete": True}
    if isinstance(change, Mapping):
        return {"doc": document(change, where)}
    if isinstance(change, (list, tuple)):
        return {"ops": [ops.check(op, f"{where} entry {i}") for i, op in enumerate(change)]}
    raise errors.InvalidArgument(f"{where} must be a partial document (a dict), a list of field operations "
                                 f"(eslm.ops) or a function of the document, got [{change!r}]")


def document(doc: Any, where: str) -> dict:
    """`doc` as a document a change may write: an object that does not set the fence."""
    if not isinstance(doc, Mapping):
        raise errors.InvalidArgument(f"{where} must be a document (a dict), got [{doc!r}]")
    if FENCE_FIELD in doc:
        raise errors.InvalidArgument(f"{where} must not set [{FENCE_FIELD}]: the fence is the plugin's to write")
    return dict(doc)


def update_path(index: str, doc_id: str, refresh: Any) -> str:
    """`/{index}/_update/{id}?retry_on_conflict=3[&refresh=..]`, names escaped whole."""
    query = urlencode({"retry_on_conflict": RETRY_ON_CONFLICT, **_refresh(refresh)})
    return f"/{quote(index, safe='')}/_update/{quote(doc_id, safe='')}?{query}"


def _refresh(refresh: Any) -> dict:
    """The `refresh` query parameter, when given (`True`, `False`, `"wait_for"`)."""
    if refresh is None:
        return {}
    return {"refresh": str(refresh).lower() if isinstance(refresh, bool) else str(refresh)}


def check_names(index: Any, doc_id: Any, where: str = "") -> None:
    if not isinstance(index, str) or not index:
        raise errors.InvalidArgument(f"{where}[index] must be a non-empty string, got [{index!r}]")
    if not isinstance(doc_id, str) or not doc_id:
        raise errors.InvalidArgument(f"{where}[id] must be a non-empty string, got [{doc_id!r}]")


def read(index: str, doc_id: str, fence: Fence) -> Steps:
    """The fenced read: raises the document's fence to `fence.token` and answers its source
    (None when it is missing or a tombstone; a missing document becomes a tombstone)."""
    check_names(index, doc_id)
    return _change(index, doc_id, fence, {}, None)


def apply(index: str, doc_id: str, fence: Fence, change: Any, refresh: Any,
          still_held: Callable[[], None]) -> Steps:
    """`held.update`'s steps: `change` a partial document, field operations, or a function of
    the source (a fenced read, then the whole result written with the same token; the function
    returning None, or the source unchanged, writes nothing). Checked before anything is sent;
    `still_held()` raises if the lock is known lost between the read and the write. Answers the
    document as it now stands (None for a tombstone)."""
    check_names(index, doc_id)
    if callable(change):
        return _read_modify_write(index, doc_id, fence, change, refresh, still_held)
    return _change(index, doc_id, fence, change_params(change), refresh)


def delete(index: str, doc_id: str, fence: Fence, refresh: Any) -> Steps:
    """A fenced delete: the document becomes a tombstone that keeps the fence."""
    check_names(index, doc_id)
    return _change(index, doc_id, fence, {"delete": True}, refresh)


def _read_modify_write(index: str, doc_id: str, fence: Fence, change: Callable[[dict | None], Any],
                       refresh: Any, still_held: Callable[[], None]) -> Steps:
    current = yield from _change(index, doc_id, fence, {}, None)
    changed = change(copy.deepcopy(current))
    if changed is None or changed == current:
        return current
    replacement = document(changed, "the change's result")
    still_held()
    return (yield from _change(index, doc_id, fence, {"replace": replacement}, refresh))


def _change(index: str, doc_id: str, fence: Fence, params: dict, refresh: Any) -> Steps:
    try:
        answer = yield Call("POST", update_path(index, doc_id, refresh), update_body(fence, params))
    except errors.BadRequest as e:
        raise explained(e) from e
    result = outcome(index, doc_id, fence, answer)
    if result.error is not None:
        raise result.error
    return result.source


def outcome(index: str, doc_id: str, fence: Fence, answer: dict) -> FencedResult:
    """How a fenced update answered (docs/API.md "Fenced changes", how to read the answer): `noop`
    with a fence token larger than ours is stale; anything else applied."""
    got = (answer.get("get") or {}).get("_source")
    source: dict = got if isinstance(got, dict) else {}
    fenced = source.get(FENCE_FIELD)
    if not isinstance(fenced, dict):
        fenced = {}
    seen = fenced.get("token")
    if not isinstance(seen, int):
        return FencedResult(index, doc_id, "failed", error=errors.LockError(
            f"fenced change of [{index}/{doc_id}] answered without the document's fence: {answer}", body=answer))
    if answer.get("result") == "noop" and seen > fence.token:
        stale = errors.StaleToken(
            f"fenced change of [{index}/{doc_id}] refused: the document's fence is token [{seen}] of "
            f"[{fenced.get('key')}], this lock's token is [{fence.token}]: a newer holder has changed it",
            body=answer, error_type="stale_token")
        stale.fence, stale.token = seen, fence.token
        return FencedResult(index, doc_id, "stale", fence=seen, error=stale)
    document_now = None if fenced.get("deleted") else {k: v for k, v in source.items() if k != FENCE_FIELD}
    return FencedResult(index, doc_id, "applied", document_now, seen)


def explained(error: errors.LockError) -> errors.LockError:
    """A refused fenced change with the plugin's reason: Elasticsearch's own is `failed to execute
    script`, the plugin's (`[ops] entry 0: ...`, `[inc] needs a number; ...`) is its `caused_by`."""
    cause = error.error.get("caused_by")
    reason = cause.get("reason") if isinstance(cause, dict) else None
    if not isinstance(reason, str) or reason in error.reason:
        return error
    return type(error)(f"{error.reason}: {reason}", error.status, error.body, error.type)


def bulk(changes: Iterable[Any], fence: Fence, refresh: Any) -> Steps:
    """`held.bulk`'s steps: every `(index, id, change)` checked (no functions: a read-modify-write
    needs its read first), then one `_bulk` of fenced updates; answers a `FencedResult` per item, in
    order, and raises only for the request as a whole."""
    items = list(changes)
    lines: list[dict] = []
    for n, item in enumerate(items):
        where = f"[changes] item {n}: "
        if not isinstance(item, (list, tuple)) or len(item) != 3:
            raise errors.InvalidArgument(f"{where}must be (index, id, change), got [{item!r}]")
        index, doc_id, change = item
        check_names(index, doc_id, where)
        if callable(change):
            raise errors.InvalidArgument(f"{where}a function of the document needs its read first: "
                                         f"use held.update for a read-modify-write")
        params = change_params(change, f"{where}[change]")
        lines += [{"update": {"_index": index, "_id": doc_id, "retry_on_conflict": RETRY_ON_CONFLICT}},
                  update_body(fence, params)]
    if not items:
        return []
    query = urlencode(_refresh(refresh))
    path = "/_bulk" + (f"?{query}" if query else "")
    answer = yield Call("POST", path, lines, headers=NDJSON_HEADERS)
    return [_item_result(index, doc_id, fence, entry)
            for (index, doc_id, _), entry in zip(items, answer["items"])]


def _item_result(index: str, doc_id: str, fence: Fence, entry: dict) -> FencedResult:
    answer = entry.get("update", {})
    if "error" in answer:
        error = explained(errors.from_response(answer.get("status", 0), {"error": answer["error"]}))
        return FencedResult(index, doc_id, "failed", error=error)
    return outcome(index, doc_id, fence, answer)
