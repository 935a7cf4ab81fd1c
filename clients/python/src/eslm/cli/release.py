"""`eslm release --force KEY`: the administrator's eviction of every holder of a key
(`POST /_locks/{key}/_force_release`, its own privilege), logged on the node with `--reason`.
The evicted holders' tokens are dead; a holder still alive finds its lock lost. There is no
release without `--force`: each `eslm lock` releases its own lock when its command ends."""

from __future__ import annotations

import json
from typing import Any

from .. import steps
from ..errors import LockNotHeld
from ..options import check_name, path_of
from .exits import Exit, Failure
from .tables import table


SCOPES = ("key", "tree", "semaphore", "election")


def force_release(locks: Any, key: str, scope: str, reason: str | None, as_json: bool) -> str:
    """Evicts every holder of `key` in `scope` (a semaphore's permits, an election's leader too)."""
    body = {"scope": scope} if reason is None else {"scope": scope, "reason": reason}
    try:
        answer = locks.run(steps.simple("POST", path_of(check_name(key, "key"), "/_force_release"), body,
                                        locks.retry_for_ms / 1000))
    except LockNotHeld as e:
        raise Failure(Exit.NOT_HELD, f"nothing holds [{key}] ({scope}): nothing released") from e
    if as_json:
        return json.dumps(answer, indent=2)
    released = answer.get("released", [])
    return f"released [{key}] ({scope}) from {len(released)} holder(s)\n" + table(
        ("OWNER", "TOKEN"), [(r.get("owner"), r.get("fencing_token")) for r in released])
