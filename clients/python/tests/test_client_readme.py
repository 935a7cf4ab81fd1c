"""The READMEs' Python examples, run as written against the test node (only the URL of
`make run`'s node is replaced), in a fresh interpreter, so they cannot drift from the API."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MAKE_RUN_URL = "http://127.0.0.1:9200"
EXAMPLES = [(ROOT / "README.md", "## Python client"), (HERE.parent / "README.md", "## Quick start"),
            (HERE.parent / "README.md", "### Leader elections")]


def example(readme: Path, heading: str) -> str:
    """The first ```python block after `heading`."""
    text = readme.read_text()
    section = text[text.index(heading):]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"no python block under {heading!r} in {readme}"
    return match.group(1)


@pytest.mark.parametrize("readme, heading", EXAMPLES, ids=["README.md", "clients/python/README.md", "elections"])
def test_readme_example_runs(es_node, readme, heading):
    code = example(readme, heading)
    assert MAKE_RUN_URL in code, "the example talks to make run's node"
    result = subprocess.run(
        [sys.executable, "-c", code.replace(MAKE_RUN_URL, es_node.url)],
        env={"PYTHONPATH": str(HERE.parent / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "token" in result.stdout, result.stdout
