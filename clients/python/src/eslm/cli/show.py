"""`eslm ls` (`GET /_locks`, every page) and `eslm who KEY` (`GET /_locks/{key}`): what is held,
by whom, and who waits, as tables or (`--json`) as the server's JSON. Reads change nothing."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from .. import steps
from .tables import duration, table

PAGE_SIZE = 1000  # the most GET /_locks answers at once


def list_locks(locks: Any, prefix: str | None, owner: str | None) -> list[dict]:
    """Every held lock whose key starts with `prefix` (and of `owner`), following `next` to the
    last page; each page's 503 retried within the client's `retry_for`."""
    found: list[dict] = []
    after = None
    while True:
        query = {k: v for k, v in (("prefix", prefix), ("owner", owner), ("size", PAGE_SIZE), ("after", after))
                 if v is not None}
        page = locks.run(steps.simple("GET", f"/_locks?{urlencode(query)}", None, locks.retry_for_ms / 1000))
        found.extend(page.get("locks", []))
        after = page.get("next")
        if not after:
            return found


def render_locks(held: list[dict], as_json: bool) -> str:
    if as_json:
        return json.dumps(held, indent=2)
    rows = [(h.get("key"), h.get("scope"), h.get("owner"), mode_of(h), h.get("fencing_token"),
             duration(h.get("lease_ms")), duration(h.get("held_ms")), h.get("node")) for h in held]
    return table(("KEY", "SCOPE", "OWNER", "MODE", "TOKEN", "LEASE LEFT", "HELD FOR", "NODE"), rows)


def render_who(key: str, state: dict, as_json: bool) -> str:
    """Holders, waiters and lock-delays of one key (intention locks of a tree marked)."""
    if as_json:
        return json.dumps(state, indent=2)
    holders, waiters, delays = state.get("holders", []), state.get("waiters", []), state.get("lock_delays", [])
    scope = state.get("scope", "key")
    if not (holders or waiters or delays):
        return f"{key} ({scope}): free"
    parts = [f"{key} ({scope}): {len(holders)} holding, {len(waiters)} waiting"]
    if holders:
        parts.append(table(("HOLDER", "MODE", "TOKEN", "LEASE LEFT", "HELD FOR", "NODE"), [
            (h.get("owner"), mode_of(h) + (" (intention)" if h.get("intention") else ""), h.get("fencing_token"),
             duration(h.get("lease_ms")), duration(h.get("held_ms")), h.get("node")) for h in holders]))
    if waiters:
        parts.append(table(("WAITER", "MODE", "PRIORITY", "WAITED", "WAIT LEFT"), [
            (w.get("owner"), mode_of(w), w.get("priority"), duration(w.get("waited_ms")),
             duration(w.get("wait_left_ms"))) for w in waiters]))
    if delays:
        parts.append(table(("LOCK-DELAY OF", "MODE", "LEFT"), [
            (d.get("owner"), d.get("mode"), duration(d.get("delay_left_ms"))) for d in delays]))
    return "\n\n".join(parts)


def mode_of(entry: dict) -> str:
    """A lock's mode, or a semaphore grant's permits."""
    if "permits" in entry and "mode" not in entry:
        return f"{entry['permits']} permits"
    return str(entry.get("mode", "-"))
