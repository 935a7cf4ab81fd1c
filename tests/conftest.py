"""Shared fixtures: real Elasticsearch nodes from the integ-test-zip with the plugin installed by
`bin/elasticsearch-plugin install` (see scripts/node.py). Nothing here mocks Elasticsearch or the
native library."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import cpu_tally  # noqa: E402
import node as esnode  # noqa: E402


class Client:
    """A tiny JSON-over-HTTP client bound to one node, with keep-alive."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.session = requests.Session()

    def request(self, method: str, path: str, body=None, raw: str | bytes | None = None,
                timeout: float = 30.0) -> requests.Response:
        headers = {}
        data = None
        if raw is not None:
            data = raw
            headers["Content-Type"] = "application/json"
        elif body is not None:
            return self.session.request(method, self.base_url + path, json=body, timeout=timeout)
        return self.session.request(method, self.base_url + path, data=data, headers=headers,
                                    timeout=timeout)

    def post(self, path: str, body=None, **kw) -> requests.Response:
        return self.request("POST", path, body, **kw)

    def get(self, path: str, **kw) -> requests.Response:
        return self.request("GET", path, **kw)


@pytest.fixture(scope="session")
def single_node():
    """One node for the whole session; stopped (and checked to stop cleanly) at the end."""
    yield from esnode.running(esnode.Node("eslm-it-single", "node-0", esnode.free_port(), esnode.free_port()))


@pytest.fixture()
def client(single_node) -> Client:
    return Client(single_node.url)


# --- issue 4: lock API clients and a node with short priority aging ----------------------------

sys.path.insert(0, str(Path(__file__).resolve().parent / "integration"))

from lockclient import AGING_MS, LockClient  # noqa: E402


@pytest.fixture()
def locks(single_node):
    """A `LockClient` (one method per lock endpoint) on the shared node."""
    lc = LockClient(single_node.url)
    yield lc
    lc.close()


@pytest.fixture(scope="session")
def aging_node():
    """A second node, started only when a test asks for it, with `locks.priority.aging` set to
    AGING_MS at start-up (`-E`), so aging bounds can be checked in well under a second per level.
    Fresh data folder each run: no cluster settings carried over."""
    yield from esnode.running(esnode.Node("eslm-it-aging", "node-0", esnode.free_port(), esnode.free_port(),
                                   extra_settings={"locks.priority.aging": f"{AGING_MS}ms"}))


@pytest.fixture(scope="module")
def restart_node():
    """A node of its own for a test that restarts it (test_restart.py): nothing else shares it."""
    yield from esnode.running(esnode.Node("eslm-it-restart", "node-0", esnode.free_port(), esnode.free_port()))


@pytest.fixture()
def aging_locks(aging_node):
    lc = LockClient(aging_node.url)
    yield lc
    lc.close()


# --- what the nodes said, attached to a failing test's report -----------------------------------

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test that used a cluster or a node gets, in its report, each node's warnings and
    errors and the last lines of its log: a failure seen once in CI can be read, not guessed."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.passed and report.capstdout and item.get_closest_marker("figures"):
        keep_figures(item.config, report)
    if report.when != "call" or not report.failed:
        return
    funcargs = getattr(item, "funcargs", {})
    nodes = list(getattr(funcargs.get("cluster"), "nodes", []))
    nodes += [v for v in funcargs.values() if isinstance(v, esnode.Node)]
    for node in nodes:
        report.sections.append((f"log of {node.name} ({node.home.parent.name})", node_log_excerpt(node)))


FIGURES = Path(__file__).resolve().parent.parent / "build" / "figures"


def keep_figures(config, report) -> None:
    """A passing test marked `figures` (a fault class's test, docs/RELIABILITY.md "Fault classes")
    keeps what it printed: in build/figures/<test>.txt, and in the run's summary, so that the
    figures of a CI run can be read from its log, not only a failure's (under `-s` they are in the
    log already)."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", report.nodeid.split("/")[-1].replace("::", "__"))
    (FIGURES / f"{name}.txt").write_text(report.capstdout, encoding="utf-8")
    config.stash.setdefault(FIGURES_KEY, []).append((report.nodeid, report.capstdout))


FIGURES_KEY = pytest.StashKey[list]()


def pytest_terminal_summary(terminalreporter, config):
    for nodeid, text in config.stash.get(FIGURES_KEY, []):
        terminalreporter.write_sep("-", f"figures of {nodeid}")
        terminalreporter.write_line(text.rstrip())


def node_log_excerpt(node, warnings=40, tail=25) -> str:
    if not node.log_file.exists():
        return "(no log)"
    lines = node.log_file.read_text(errors="replace").splitlines()
    noisy = ("BootstrapChecks", "deprecation", "i.o.usage", "ClusterBootstrapService")
    flagged = [line for line in lines
               if ("][WARN" in line or "][ERROR" in line) and not any(n in line for n in noisy)]
    return "\n".join(["-- warnings and errors (last %d):" % warnings, *flagged[-warnings:],
                      "-- last %d lines:" % tail, *lines[-tail:]])


def pytest_configure(config):
    cpu_tally.register(config)  # the CPU each module cost, printed after the run
