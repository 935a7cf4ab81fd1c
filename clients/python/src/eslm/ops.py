"""Field operations of a fenced change, and the delete marker of a fenced bulk (docs/API.md
"Fenced changes"):

    from eslm import ops

    held.update("orders", "42", [ops.inc("items"), ops.append("log", "packed")])
    held.bulk([("orders", "42", {"status": "shipped"}), ("orders", "43", ops.DELETE)])

Each helper answers the operation as the plugin's `fence` script takes it (a plain dict); the
operations run in order on the document as its primary holds it, so a counter or a list needs no
read. A bad operation is refused here, with `InvalidArgument`, before anything is sent."""

from __future__ import annotations

import math
from numbers import Real
from typing import Any, Mapping

from .errors import InvalidArgument

# The field of a fenced document that holds its fence: the plugin writes it, a change never may.
FENCE_FIELD = "eslm_fence"

_TAKES_A_VALUE = {"set": True, "append": True, "inc": True, "remove": False}


class Delete:
    """The marker of a fenced delete in `held.bulk(...)`: `(index, id, ops.DELETE)`. The document
    becomes a tombstone that keeps its fence (`held.delete` does one alone)."""

    def __repr__(self) -> str:
        return "eslm.ops.DELETE"


DELETE = Delete()


def inc(field: str, by: int | float = 1) -> dict:
    """Adds `by` to the number in `field` (a dotted path, `"stats.count"`); a missing field
    counts as 0. Whole numbers stay whole."""
    return check({"op": "inc", "field": field, "value": by})


def append(field: str, value: Any) -> dict:
    """Appends `value` to the list in `field`; a missing field is an empty list."""
    return check({"op": "append", "field": field, "value": value})


def set(field: str, value: Any) -> dict:  # noqa: A001 - the operation's name on the wire
    """Sets `field` to `value`; objects on the way are created."""
    return check({"op": "set", "field": field, "value": value})


def remove(field: str) -> dict:
    """Removes `field` if it is there."""
    return check({"op": "remove", "field": field})


def check(op: Any, where: str = "[ops]") -> dict:
    """`op` if it is a field operation the plugin takes, else `InvalidArgument` naming what is
    wrong (the checks the server makes that need no document: docs/API.md "Fenced changes")."""
    if not isinstance(op, Mapping):
        raise InvalidArgument(f"{where} must be a field operation {{'op', 'field', 'value'?}}, got [{op!r}]")
    unknown = sorted(str(k) for k in op if k not in ("op", "field", "value"))
    if unknown:
        raise InvalidArgument(f"{where} has an unknown member {unknown}")
    name = op.get("op")
    if name not in _TAKES_A_VALUE:
        raise InvalidArgument(f"{where} [op] must be one of [set], [inc], [append], [remove], got [{name!r}]")
    field = op.get("field")
    if not isinstance(field, str) or not field or "" in field.split("."):
        raise InvalidArgument(f"{where} [field] must be a dotted field name without an empty segment, "
                              f"got [{field!r}]")
    if field.split(".")[0] == FENCE_FIELD:
        raise InvalidArgument(f"{where} [field] must not name [{FENCE_FIELD}]: the fence is the plugin's to write")
    if _TAKES_A_VALUE[name] != ("value" in op):
        raise InvalidArgument(f"{where} [{name}] " + ("needs a [value]" if _TAKES_A_VALUE[name] else "takes no [value]"))
    if name == "inc":
        by = op["value"]
        if isinstance(by, bool) or not isinstance(by, Real) or not math.isfinite(by):
            raise InvalidArgument(f"{where} [value] of [inc] must be a finite number, got [{by!r}]")
    return dict(op)
