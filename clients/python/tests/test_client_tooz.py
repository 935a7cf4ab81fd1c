"""tooz's own coordination suite (tooz 9.1.0, tooz/tests/test_coordination.py) run against a
real node through the driver (eslm/tooz_driver.py), as tooz runs it for its own drivers:
`TOOZ_TEST_URL` names the backend. It runs in the venv make builds from requirements-tooz.txt
(build/py-tooz), where the client is installed with its `tooz.backends` entry point.

It runs once per `make test`, on the default Elasticsearch version: its venv and the driver are
the same on both runs of the client's suite (Makefile `client-test`), and what differs between
versions is checked by the modules marked `every_version` (pytest.ini).

Every test must pass; the one skip allowed is the one tooz itself makes for every driver but its
etcd3gw, memcached and Redis drivers (clients/python/README.md "tooz"):
`test_watch_join_group_disappear`, which destroys a group under its members through a private
method of those three drivers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import node as esnode  # scripts/, on the path from conftest.py

ROOT = Path(__file__).resolve().parents[3]
TOOZ_PYTHON = ROOT / "build" / "py-tooz" / "bin" / "python"
# The reason tooz gives for the one skip allowed (test_watch_join_group_disappear).
ALLOWED_SKIP = "This test only works with coordinators that have the ability to destroy groups."
TOOZ_TESTS = 83  # in tooz 9.1.0's test_coordination.py

pytestmark = pytest.mark.skipif(esnode.es_version() != esnode.default_es_version(),
                                reason="tooz's suite runs on the default Elasticsearch version only")


@pytest.mark.skipif(not TOOZ_PYTHON.exists(), reason="no tooz venv: make client-test builds build/py-tooz")
def test_toozs_coordination_suite_passes_against_a_real_node(es_node):
    suite = subprocess.run(
        [str(TOOZ_PYTHON), "-c", "import tooz.tests, os; print(os.path.dirname(tooz.tests.__file__))"],
        capture_output=True, text=True, check=True).stdout.strip()
    url = es_node.url.replace("http://", "elasticsearch+locks://")
    done = subprocess.run(
        [str(TOOZ_PYTHON), "-m", "pytest", f"{suite}/test_coordination.py", "-rs", "-q", "-p", "no:cacheprovider",
         "-o", "addopts="],
        capture_output=True, text=True, timeout=900, env={**os.environ, "TOOZ_TEST_URL": url}, cwd=ROOT / "build")
    out = done.stdout + done.stderr
    print(out[-4000:], file=sys.stderr)
    summary = out.strip().splitlines()[-1]
    assert done.returncode == 0, f"tooz's suite failed: {summary}\n{out[-6000:]}"
    assert not re.search(r"\d+ (failed|error)", summary), summary
    reasons = re.findall(r"^SKIPPED \[\d+\] [^:]+:\d+: (.*)$", out, re.M)
    assert all(r == ALLOWED_SKIP for r in reasons) and len(reasons) <= 1, f"skips tooz does not make: {reasons}"
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed + len(reasons) == TOOZ_TESTS, f"tooz 9.1.0's module has {TOOZ_TESTS} tests: {summary}"


@pytest.mark.skipif(not TOOZ_PYTHON.exists(), reason="no tooz venv: make client-test builds build/py-tooz")
def test_the_readme_tooz_example_runs(es_node):
    readme = (ROOT / "clients" / "python" / "README.md").read_text()
    code = re.search(r"```python\n(import tooz.*?)```", readme, re.S).group(1)
    host = es_node.url.removeprefix("http://")
    done = subprocess.run([str(TOOZ_PYTHON), "-c", code.replace("localhost:9200", host)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "tooz lock held" in done.stdout, done.stdout + done.stderr
