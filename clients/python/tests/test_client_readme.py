"""The READMEs' Python examples, run as written against the test node (only the URL of
`make run`'s node is replaced), in a fresh interpreter, so they cannot drift from the API: the
root README's, the elections block of clients/python/README.md by itself (it says it stands
alone), and every block of clients/python/README.md in order in one interpreter (it says each
goes on from the quick start)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MAKE_RUN_URL = "http://127.0.0.1:9200"
CLIENT_README = HERE.parent / "README.md"
EXAMPLES = [(ROOT / "README.md", "## Python client"), (CLIENT_README, "### Leader elections")]


def example(readme: Path, heading: str) -> str:
    """The first ```python block after `heading`."""
    text = readme.read_text()
    section = text[text.index(heading):]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"no python block under {heading!r} in {readme}"
    return match.group(1)


def run_example(code: str, url: str) -> str:
    assert MAKE_RUN_URL in code, "the example talks to make run's node"
    result = subprocess.run(
        [sys.executable, "-c", code.replace(MAKE_RUN_URL, url)],
        env={"PYTHONPATH": str(HERE.parent / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.parametrize("readme, heading", EXAMPLES, ids=["README.md", "elections"])
def test_readme_example_runs(es_node, readme, heading):
    assert "token" in run_example(example(readme, heading), es_node.url)


def test_every_block_of_the_client_readme_runs_in_order(es_node):
    # The tooz block runs where tooz is installed (test_client_tooz.py).
    blocks = [b for b in re.findall(r"```python\n(.*?)```", CLIENT_README.read_text(), re.S) if "import tooz" not in b]
    assert len(blocks) >= 8, "the quick start, fencing, fenced changes, nesting, sessions, semaphores, elections, asyncio"
    out = run_example("\n".join(blocks), es_node.url)
    for printed in ("one after the other: ['Thread-", "permits 1", "async token", "resigned: True",
                    "members: ['worker-1'] changed: False", "bulk: ['applied', 'applied']",
                    "fenced change: total 10 True", "read-write: shared shared True"):
        assert printed in out, out
