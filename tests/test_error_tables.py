"""Docs that cannot drift (issue 39): both client READMEs map every `error.type` of docs/API.md's
Errors table to a class, and name no type the table does not have. No node: reading three files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def section(path: Path, heading: str) -> str:
    text = path.read_text()
    start = text.index(heading)
    end = text.find("\n#", start + len(heading))
    return text[start:end if end > 0 else None]


def types_in_table(text: str, column: int) -> set[str]:
    """The backquoted `error.type` in column `column` of every markdown table row of `text`."""
    types = set()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > column and (m := re.fullmatch(r"`([a-z_]+_exception)`", cells[column])):
            types.add(m.group(1))
    return types


def test_the_api_table_is_read():
    assert "lock_conflict_exception" in types_in_table(section(ROOT / "docs/API.md", "### Errors"), 1)


@pytest.mark.parametrize("readme", ["clients/python/README.md", "clients/java/README.md"])
def test_each_client_readme_maps_every_error_type_of_the_api(readme):
    api = types_in_table(section(ROOT / "docs/API.md", "### Errors"), 1)
    client = types_in_table(section(ROOT / readme, "## Errors"), 2)
    assert client == api, f"{readme}: missing {sorted(api - client)}, not in API.md {sorted(client - api)}"
