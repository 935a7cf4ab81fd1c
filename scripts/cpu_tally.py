"""A pytest plugin that prints, after the run, the CPU each test module cost: its own process's
and that of everything it started and waited for (Elasticsearch nodes, Maven, cargo, mypy).

Why: `make test` runs its lanes on two cores that stay busy from start to end
(CONTRIBUTING.md "Tests"), so a module's wall time says little of what it costs the run: only
less CPU work shortens it. This names where the CPU goes, so cuts go where they count.

A node's CPU counts when it is reaped: the module that stops it pays for it. A session-wide node
(tests/conftest.py's `single_node`, the client suite's `es_node`) is stopped in the last test's
teardown, so the last module carries it; the summary says which that is. A server JVM killed
with -9 together with its launcher (`Node.kill`) may be reaped by init instead, and its CPU is
then missing from the tally: the figures are a floor.

Registered by tests/conftest.py and clients/python/tests/conftest.py (`register`)."""

from __future__ import annotations

import os
import resource
import sys
import time
from collections import defaultdict

import pytest

_by_module: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])  # module: [cpu s, wall s]
_last = {"module": ""}  # the module of the last test run: it reaps the session-wide nodes


def register(config) -> None:
    """Adds this plugin once, whichever conftest asks first."""
    if not config.pluginmanager.has_plugin("cpu_tally"):
        config.pluginmanager.register(sys.modules[__name__], "cpu_tally")


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu_seconds(), time.monotonic()
    yield
    module = item.nodeid.split("::")[0]
    tally = _by_module[module]
    tally[0] += _cpu_seconds() - cpu
    tally[1] += time.monotonic() - wall
    _last["module"] = module


def pytest_terminal_summary(terminalreporter):
    if not _by_module:
        return
    write = terminalreporter.write_line
    total = sum(cpu for cpu, _ in _by_module.values())
    terminalreporter.section(f"CPU by module: {total:.0f} s in all (scripts/cpu_tally.py)")
    for module, (cpu, wall) in sorted(_by_module.items(), key=lambda kv: -kv[1][0]):
        write(f"{cpu:8.1f} s CPU {wall:8.1f} s wall  {module}")
    if _last["module"]:
        write(f"(session-wide nodes are reaped in the last module, {_last['module']}; lane "
              f"{os.environ.get('ESLM_LANE', '-')})")
