#!/usr/bin/env python3
"""The contract driver of the Python client (tests/contract/PROTOCOL.md): JSON lines of commands on
standard input, one JSON line per command on standard output, each command performed through the
client's public API (`eslm.Locks` over an `elasticsearch.Elasticsearch`) and each error mapped to
a kind. It holds no lock logic of its own.

    PYTHONPATH=clients/python/src ESLM_URLS=http://127.0.0.1:9200 python3 clients/python/contract/driver.py

Commands run one after another in the order sent; one sent with `"async": true` runs in a thread
of its own and is answered when it completes, possibly after later ones. Logs go to standard
error.

What the client cannot do is refused, never imitated; `keepalive: false` is the client's
`watchdog=False`."""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any, Callable

from elasticsearch import Elasticsearch

import eslm

log = logging.getLogger("eslm.contract")


class ProtocolError(Exception):
    """An unknown command, a missing or bad argument: kind `invalid_argument`."""


class Handle:
    """A held lock as the driver knows it: the client's handle, its client's name, and the event
    its `on_lost` callback sets."""

    def __init__(self, client: str, lost: threading.Event):
        self.client = client
        self.held: eslm.HeldLock | None = None
        self.lost = lost


clients: dict[str, tuple[eslm.Locks, Elasticsearch]] = {}
handles: dict[str, Handle] = {}
out_lock = threading.Lock()


def write(answer: dict) -> None:
    line = json.dumps(answer)
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def arg(args: dict, name: str, check: Callable[[Any], bool], what: str) -> Any:
    value = args.get(name)
    if not check(value):
        raise ProtocolError(f"[{name}] is required: {what}")
    return value


def optional(args: dict, name: str, check: Callable[[Any], bool], what: str) -> Any:
    value = args.get(name)
    if value is None:
        return None
    if not check(value):
        raise ProtocolError(f"[{name}] must be {what}")
    return value


def is_name(v: Any) -> bool:
    return isinstance(v, str) and v != ""


def is_millis(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def millis(v: int | None) -> timedelta | None:
    return None if v is None else timedelta(milliseconds=v)


def opened(name: str) -> eslm.Locks:
    found = clients.get(name)
    if found is None:
        raise ProtocolError(f"no client [{name}] was opened")
    return found[0]


def handle_of(args: dict) -> Handle:
    name = arg(args, "handle", is_name, "a handle name")
    found = handles.get(name)
    if found is None or found.held is None:
        raise ProtocolError(f"no handle [{name}]")
    return found


def env_urls() -> list[str]:
    return [u.strip() for u in os.environ.get("ESLM_URLS", "").split(",") if u.strip()]


# --- commands ---------------------------------------------------------------------------------

def cmd_open(args: dict) -> dict:
    name = arg(args, "client", is_name, "a client name")
    urls = optional(args, "urls", lambda v: isinstance(v, list) and v and all(map(is_name, v)), "a list of URLs") \
        or env_urls()
    if not urls:
        raise ProtocolError("[urls] is required when ESLM_URLS is not set")
    retry_for = optional(args, "retry_for_ms", is_millis, "milliseconds")
    es = Elasticsearch(urls)
    locks = eslm.Locks(es) if retry_for is None else eslm.Locks(es, retry_for=millis(retry_for))
    previous = clients.get(name)
    clients[name] = (locks, es)
    if previous is not None:
        close_client(*previous)
    return {}


def cmd_lock(args: dict) -> dict:
    client = arg(args, "client", is_name, "a client name")
    locks = opened(client)
    name = arg(args, "handle", is_name, "a handle name")
    key = arg(args, "key", lambda v: isinstance(v, str), "a key")
    lease = optional(args, "lease_ms", is_millis, "milliseconds")
    timeout = optional(args, "timeout_ms", is_millis, "milliseconds")
    once = optional(args, "try", is_bool, "true or false") or False
    mode = optional(args, "mode", is_name, "exclusive or shared") or "exclusive"
    keepalive = optional(args, "keepalive", is_bool, "true or false")
    if once and timeout is not None:
        raise ProtocolError("[timeout_ms] cannot be given with [try]")
    lost = threading.Event()
    options: dict[str, Any] = {"lease": millis(lease), "mode": mode, "on_lost": lambda _held: lost.set(),
                               "watchdog": keepalive is not False}
    if once:
        options["blocking"] = False  # busy: LockConflict (try_lock would answer None)
    elif timeout is not None:
        options["timeout"] = millis(timeout)
    held = locks.acquire(key, **options)
    entry = Handle(client, lost)
    entry.held = held
    handles[name] = entry
    return {"token": held.fencing_token}


def cmd_lock_again(args: dict) -> dict:
    entry = handle_of(args)
    held = entry.held
    locks = opened(entry.client)
    # The owner that holds the lock acquires it again through this client: the client names the
    # held acquisition (README "Nesting"), the server answers with the same grant, and the nested
    # handle, let go at once as a nested block's end, releases nothing.
    again = locks.acquire(held.key, owner=held.owner, mode=held.grants[0].mode, blocking=False)
    try:
        return {"token": again.fencing_token}
    finally:
        again.release()


def cmd_unlock(args: dict) -> dict:
    handle_of(args).held.release()
    return {}


def cmd_renew(args: dict) -> dict:
    entry = handle_of(args)
    lease = optional(args, "lease_ms", is_millis, "milliseconds")
    entry.held.renew(millis(lease))
    return {}


def cmd_lost(args: dict) -> dict:
    return {"lost": handle_of(args).held.lost}


def cmd_await_lost(args: dict) -> dict:
    entry = handle_of(args)
    within = arg(args, "within_ms", is_millis, "milliseconds")
    started = time_ms()
    if entry.lost.wait(within / 1000):
        return {"lost": True, "after_ms": round(time_ms() - started)}
    return {"lost": False}


def cmd_fenced_write(args: dict) -> dict:
    entry = handle_of(args)
    index = arg(args, "index", is_name, "an index name")
    doc_id = arg(args, "doc_id", lambda v: is_name(v) or (isinstance(v, int) and not isinstance(v, bool)),
                 "a document id")
    doc = arg(args, "doc", lambda v: isinstance(v, dict), "an object")
    entry.held.index(index, doc, id=str(doc_id))
    return {}


FIELD_OPS: dict[str, Callable[[dict], dict]] = {
    "inc": lambda op: eslm.ops.inc(op.get("field"), op.get("value")),
    "append": lambda op: eslm.ops.append(op.get("field"), op.get("value")),
    "set": lambda op: eslm.ops.set(op.get("field"), op.get("value")),
    "remove": lambda op: eslm.ops.remove(op.get("field")),
}


def field_op(op: Any) -> dict:
    """A field operation of the protocol (the API's `{op, field, value}`), made by `eslm.ops`."""
    if not isinstance(op, dict) or op.get("op") not in FIELD_OPS:
        raise ProtocolError(f"[ops] entries must be {{op: inc|append|set|remove, field, value}}, got [{op!r}]")
    return FIELD_OPS[op["op"]](op)


def cmd_fenced_update(args: dict) -> dict:
    entry = handle_of(args)
    index = arg(args, "index", is_name, "an index name")
    doc_id = arg(args, "doc_id", lambda v: is_name(v) or (isinstance(v, int) and not isinstance(v, bool)),
                 "a document id")
    ops = arg(args, "ops", lambda v: isinstance(v, list), "a list of field operations")
    return {"doc": entry.held.update(index, str(doc_id), [field_op(op) for op in ops])}


def cmd_close(args: dict) -> dict:
    name = arg(args, "client", is_name, "a client name")
    if name not in clients:
        raise ProtocolError(f"no client [{name}] was opened")
    close_client(*clients[name])
    return {}


def cmd_exit(_args: dict) -> dict:
    close_all()
    return {}


COMMANDS: dict[str, Callable[[dict], dict]] = {
    "open": cmd_open, "lock": cmd_lock, "lock_again": cmd_lock_again, "unlock": cmd_unlock,
    "renew": cmd_renew, "lost": cmd_lost, "await_lost": cmd_await_lost, "fenced_write": cmd_fenced_write,
    "fenced_update": cmd_fenced_update, "close": cmd_close, "exit": cmd_exit,
}


def time_ms() -> float:
    return time.monotonic() * 1000


def close_client(locks: eslm.Locks, es: Elasticsearch) -> None:
    locks.close()
    es.close()


def close_all() -> None:
    for locks, es in clients.values():
        try:
            close_client(locks, es)
        except Exception as e:  # noqa: BLE001 - reported, the others still closed
            log.warning("closing a client: %r", e)


# --- errors -----------------------------------------------------------------------------------

def kind_of(error: BaseException, command: str, lost_before: bool, client_closed: bool) -> str:
    """PROTOCOL.md's kind for the client's `error`. `lost_before`: the command's handle was known
    lost before it ran; `client_closed`: the command's client had been closed."""
    if isinstance(error, ProtocolError):
        return "invalid_argument"
    if isinstance(error, eslm.InvalidArgument) and client_closed:
        return "closed"  # Locks.check_open: acquires after close() raise InvalidArgument
    if isinstance(error, eslm.LockConflict):
        return "conflict"
    if isinstance(error, eslm.LockWaitTimeout):
        return "wait_timeout"
    if isinstance(error, eslm.LockNotHeld):
        return "not_held"
    if isinstance(error, eslm.StaleToken):
        return "stale_token"
    if isinstance(error, eslm.LockLost):
        # A release that itself found the grant gone (404) is the server's not_held; a lock the
        # client already knew lost is its lost-lock error.
        if command in ("unlock", "renew") and not lost_before and isinstance(error.__cause__, eslm.LockNotHeld):
            return "not_held"
        return "lost"
    if isinstance(error, eslm.Unavailable):
        return "unavailable"
    if isinstance(error, (eslm.InvalidArgument, eslm.BadRequest)):
        return "invalid_argument"
    return "other"


def perform(request: dict) -> dict:
    id_ = request.get("id")
    command = request.get("cmd") if isinstance(request.get("cmd"), str) else ""
    entry = handles.get(request["handle"]) if isinstance(request.get("handle"), str) else None
    lost_before = entry is not None and entry.held is not None and entry.held.lost
    named = clients.get(request["client"]) if isinstance(request.get("client"), str) else None
    client_closed = named is not None and named[0].closed
    try:
        run = COMMANDS.get(command)
        if run is None:
            raise ProtocolError(f"unknown command [{command}]")
        return {"id": id_, "ok": True, **run(request)}
    except Exception as e:  # noqa: BLE001 - every error is an answer
        log.info("%s #%s failed: %s: %s", command, id_, type(e).__name__, e)
        kind = kind_of(e, command, lost_before, client_closed)
        return {"id": id_, "ok": False, "error": {"kind": kind, "message": f"{type(e).__name__}: {e}"}}


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="driver %(asctime)s %(name)s: %(message)s")
    pool = ThreadPoolExecutor(32, thread_name_prefix="contract-async")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("not an object")
        except ValueError as e:
            write({"id": None, "ok": False, "error": {"kind": "invalid_argument", "message": f"not a JSON object: {e}"}})
            continue
        if request.get("async") is True:
            pool.submit(lambda r=request: write(perform(r)))
            continue
        write(perform(request))
        if request.get("cmd") == "exit":
            break
    else:
        close_all()
    sys.stdout.flush()
    os._exit(0)  # threads still waiting on the server must not hold the exit


if __name__ == "__main__":
    sys.exit(main())
