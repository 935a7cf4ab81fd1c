"""Fixtures of the Python client's tests: a real node started by scripts/node.py (the plugin
installed with `elasticsearch-plugin install`), the official `elasticsearch` client on it, and
the package imported from clients/python/src (no install step needed)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(HERE.parent / "src"), str(ROOT / "scripts"), str(ROOT / "tests" / "integration")]

import cpu_tally  # noqa: E402
import node as esnode  # noqa: E402
from elasticsearch import AsyncElasticsearch, Elasticsearch  # noqa: E402

from eslm import Locks  # noqa: E402


@pytest.fixture(scope="session")
def es_node():
    """One node for the client's tests; stopped (and checked to stop cleanly) at the end. make test
    runs this suite on two versions at once: scripts/node.py gives each version folders of its own."""
    yield from esnode.running(esnode.Node("eslm-py-client", "node-0", esnode.free_port(), esnode.free_port()))


@pytest.fixture()
def es(es_node):
    client = Elasticsearch(es_node.url)
    yield client
    client.close()


@pytest.fixture()
async def aes(es_node):
    client = AsyncElasticsearch(es_node.url)
    yield client
    await client.close()


@pytest.fixture()
def locks(es) -> Locks:
    """A client, closed at the end of the test (before its `es`): every thread it started ends."""
    with Locks(es) as client:
        yield client


@pytest.fixture()
def other(es) -> Locks:
    """A second client: the contender."""
    with Locks(es) as client:
        yield client


@pytest.fixture()
def holders(es):
    """`holders(key, scope="key")`: the owners holding `key` now (not intention locks)."""
    probe = Locks(es)
    return lambda key, scope="key": [h["owner"] for h in probe.get(key, scope=scope)["holders"]
                                     if not h.get("intention")]


@pytest.fixture()
def noticed():
    """`noticed(predicate, timeout)`: polls until `predicate()` is true (True) or `timeout`
    seconds pass (False). For checks inside a lock's block: an AssertionError there would be
    replaced by the block's LockLost, so the outcome is recorded and asserted after the block."""
    def poll(predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True
    return poll


def pytest_configure(config):
    cpu_tally.register(config)  # the CPU each module cost, printed after the run
