"""Durations (`lease`, `wait`, `ttl`, `retry_for`): an Elasticsearch time value string ("500ms",
"30s", "1m"), a number of seconds (int or float), or a `datetime.timedelta`. They are checked
here, before any request is sent, and sent as whole milliseconds, which docs/API.md
("Durations") accepts as a JSON number."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import Union

from .errors import InvalidArgument

Duration = Union[str, int, float, timedelta]

# The units of Elasticsearch's TimeValue, in milliseconds.
_UNIT_MS = {"nanos": 1e-6, "micros": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0,
            "h": 3_600_000.0, "d": 86_400_000.0}
_TIME_VALUE = re.compile(r"(\d+(?:\.\d+)?)(nanos|micros|ms|s|m|h|d)")


def to_millis(value: Duration, name: str) -> int:
    """`value` in whole milliseconds (a positive fraction of one counts as 1, so a small wait
    is never turned into "do not wait"). Raises InvalidArgument naming `name` for anything that
    is not a duration: other types, bools, negative, NaN or infinite numbers, unknown units."""
    ms = _millis(value, name)
    if math.isnan(ms) or math.isinf(ms) or ms < 0:
        raise InvalidArgument(f"[{name}] must be a finite duration >= 0, got [{value!r}]")
    return math.ceil(ms)


def _millis(value: Duration, name: str) -> float:
    if isinstance(value, bool):  # a bool is an int to Python, never a duration to a caller
        raise InvalidArgument(f"[{name}] must be a duration such as \"30s\", got [{value!r}]")
    if isinstance(value, timedelta):
        return value.total_seconds() * 1000.0
    if isinstance(value, (int, float)):
        return float(value) * 1000.0
    if isinstance(value, str):
        match = _TIME_VALUE.fullmatch(value.strip())
        if match:
            return float(match.group(1)) * _UNIT_MS[match.group(2)]
        raise InvalidArgument(
            f"[{name}] is not a duration: [{value}] (use a number and a unit: 500ms, 30s, 1m, 2h)")
    raise InvalidArgument(
        f"[{name}] must be a duration string (\"30s\"), seconds or a timedelta, got {type(value).__name__}")


def optional_millis(value: Duration | None, name: str) -> int | None:
    """`to_millis`, passing None through (the server's default applies)."""
    return None if value is None else to_millis(value, name)
