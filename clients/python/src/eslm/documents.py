"""Writes a lock, or no lock, keeps safe (docs/API.md "Fenced writes and optimistic updates"),
as steps (see steps.py) shared by the sync and the asyncio client.

- A fenced write: a held lock indexes a document with its fencing token as the document's
  external version (`version_type=external_gte`), so Elasticsearch itself refuses the write of a
  holder whose lock ended and whose key a later holder, with a larger token, already wrote for.
- An optimistic update, without a lock: read the document, apply a function, write it back only
  if nobody wrote in between (`if_seq_no` / `if_primary_term`); on a conflict, read and apply
  again, a bounded number of times with a jittered backoff."""

from __future__ import annotations

import copy
import itertools
from typing import Any, Callable
from urllib.parse import quote, urlencode

from . import errors
from .steps import Call, Sleep, Steps, backoff

# How many times an optimistic update reads and applies again after losing a race.
DEFAULT_RETRIES = 10


def doc_path(index: str, doc_id: str, params: dict) -> str:
    """`/{index}/_doc/{id}?...`, both names escaped whole (a `/` in an id stays in the id)."""
    query = urlencode({k: _param(v) for k, v in params.items() if v is not None})
    return f"/{quote(index, safe='')}/_doc/{quote(doc_id, safe='')}" + (f"?{query}" if query else "")


def _param(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def fenced_index(index: str, doc_id: str, document: dict, token: int, refresh: Any = None) -> Steps:
    """Indexes `document` with `token` as its external version: accepted when the document's
    version is at most `token` (the same holder may write again), refused with `StaleToken` when a
    later holder already wrote with a larger token. Returns Elasticsearch's answer."""
    params = {"version": token, "version_type": "external_gte", "refresh": refresh}
    try:
        return (yield Call("PUT", doc_path(index, doc_id, params), document))
    except errors.VersionConflict as e:
        raise errors.StaleToken(f"write of [{index}/{doc_id}] with fencing token [{token}] refused: "
                                f"{e.reason}", e.status, e.body, e.type) from e


def optimistic_update(index: str, doc_id: str, change: Callable[[dict | None], dict | None],
                      retries: int = DEFAULT_RETRIES, refresh: Any = None) -> Steps:
    """Reads the document, gives `change` a copy of its source (None when there is none) and
    writes what it returns back only if nobody wrote in between; a document that does not exist
    is created only if nobody created it in between. `change` returning None, or the source
    unchanged, writes nothing. After `retries` lost races raises `UpdateConflict`. Returns the
    source as it now stands."""
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise errors.InvalidArgument(f"[retries] must be a whole number of at least 0, got [{retries!r}]")
    for attempt in itertools.count():
        source, condition = yield from _read(index, doc_id)
        changed = change(copy.deepcopy(source))
        if changed is None or changed == source:
            return source
        try:
            yield Call("PUT", doc_path(index, doc_id, {**condition, "refresh": refresh}), changed)
            return changed
        except errors.VersionConflict as e:
            if attempt == retries:
                raise errors.UpdateConflict(
                    f"update of [{index}/{doc_id}] lost its race {retries + 1} times: {e.reason}",
                    e.status, e.body, e.type) from e
            yield Sleep(backoff(attempt))


def _read(index: str, doc_id: str) -> Steps:
    """The document's source and the condition a write of it needs: its sequence number and
    primary term, or, when it does not exist (nor its index), that the write creates it."""
    try:
        got = yield Call("GET", doc_path(index, doc_id, {}))
    except errors.LockError as e:
        if e.status != 404:
            raise
        return None, {"op_type": "create"}
    return got["_source"], {"if_seq_no": got["_seq_no"], "if_primary_term": got["_primary_term"]}
