"""Plain-text tables for `eslm ls` and `eslm who`, as `docker ps` and `kubectl get` print theirs:
an upper-case header, columns padded to their widest cell, no borders; durations readable."""

from __future__ import annotations

from typing import Any, Sequence


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [list(header)] + [["-" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


def duration(ms: Any) -> str | None:
    """Milliseconds as `850ms`, `28.9s`, `4m05s`, `3h02m`, `2d04h`; None stays None."""
    if ms is None:
        return None
    ms = int(ms)
    if ms < 1000:
        return f"{ms}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    seconds = ms // 1000
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    if seconds < 86_400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86_400}d{seconds % 86_400 // 3600:02d}h"
