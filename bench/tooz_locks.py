#!/usr/bin/env python3
"""A tooz lock's acquire + release through three tooz drivers, side by side in one run (issue 38
item 5): the lock manager's (`elasticsearch+locks://`, clients/python/src/eslm/tooz_driver.py),
tooz's ZooKeeper driver (kazoo's lock recipe) and tooz's Redis driver (redis-py's Lua lock). A
benchmark, not a test.

One server of each on this machine (a single plugin node from scripts/node.py, a standalone
ZooKeeper and a Redis without persistence, as bench/peers.py starts them), one tooz coordinator
per driver in this process, one uncontended lock each; every pair is

    lock.acquire()   # blocking, as tooz's default
    lock.release()

in alternating rounds after a warm-up of each, so a slow moment of the machine falls on every
driver alike. The lock manager's pair writes its state log on the node (fsync) as every grant
does; ZooKeeper syncs its transaction log per write; Redis is in memory only.

Run it with the tooz venv that `make client-test` builds (tooz, the eslm package, redis-py); it
pip-installs kazoo there if missing, and apt-installs ZooKeeper or Redis if missing:

    make build/py-tooz/bin/python && build/py-tooz/bin/python bench/tooz_locks.py [--pairs 2000]

Prints a JSON summary and the markdown table for bench/RESULTS.md; writes
build/bench-tooz/<date>.json. Needs the plugin zip (`make build`)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "scripts"), str(HERE)]

import node as esnode  # noqa: E402
import peers  # noqa: E402
from client_overhead import measure  # noqa: E402
from run import machine, other_load  # noqa: E402

LABELS = {"eslm": "lock manager (`elasticsearch+locks://`, one node)",
          "zookeeper": "ZooKeeper (`zookeeper://`, kazoo's lock, standalone server)",
          "redis": "Redis (`redis://`, redis-py's lock, no persistence)"}


def coordinator(url: str, member: str):
    from tooz import coordination

    c = coordination.get_coordinator(url, member.encode())
    c.start(start_heart=True)
    return c


def pair_of(lock):
    def pair() -> None:
        assert lock.acquire(blocking=True)
        assert lock.release()
    return pair


def table(figures: dict) -> str:
    lines = ["| tooz driver | p50 (ms) | p99 (ms) | mean (ms) | pairs/s | client CPU per pair (ms) |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, f in figures.items():
        lines.append(f"| {LABELS[name]} | {f['p50_ms']:.3f} | {f['p99_ms']:.3f} | {f['mean_ms']:.3f} | "
                     f"{f['pairs_per_s']:,.0f} | {f['client_cpu_ms']:.3f} |")
    return "\n".join(lines)


def versions() -> dict:
    from importlib.metadata import version

    return {pkg: version(pkg) for pkg in ("tooz", "kazoo", "redis", "elasticsearch", "elasticsearch-lock-manager")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2000, help="measured pairs per driver")
    parser.add_argument("--warmup", type=int, default=200, help="pairs per driver before measuring")
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds")
    args = parser.parse_args()
    peers.ensure_installed(["zookeeper", "redis"])
    started = dt.datetime.now(dt.timezone.utc)
    box = machine()
    workdir = ROOT / "build" / "bench-tooz" / "servers"
    workdir.mkdir(parents=True, exist_ok=True)
    redis = peers.Redis()
    node = esnode.Node("eslm-bench-tooz", "node-0", esnode.free_port(), esnode.free_port())
    coordinators = []
    try:
        peers.ZK.start(workdir)
        redis.start(workdir)
        for served in esnode.running(node):
            urls = {"eslm": f"elasticsearch+locks://127.0.0.1:{served.http_port}",
                    "zookeeper": f"zookeeper://127.0.0.1:{peers.ZK.port}",
                    "redis": f"redis://127.0.0.1:{redis.port}"}
            ways = {}
            for name, url in urls.items():
                coordinators.append(coordinator(url, f"bench-{name}"))
                ways[name] = pair_of(coordinators[-1].get_lock(f"bench-tooz-{name}".encode()))
            figures = measure(ways, args.pairs, args.warmup, args.rounds)
            for c in coordinators:
                c.stop()
            coordinators.clear()
            box["loadavg_after"] = os.getloadavg()
            box["other_load"] = other_load()
    finally:
        for c in coordinators:
            c.stop()
        redis.stop()
        peers.ZK.stop()
    result = {"started_utc": started.isoformat(timespec="seconds"), "args": vars(args), "machine": box,
              "servers": {"zookeeper": peers.ZK.version}, "versions": versions(), "figures": figures}
    out = ROOT / "build" / "bench-tooz" / f"{started:%Y-%m-%dT%H%M%S}.json"
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    print()
    print(table(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
