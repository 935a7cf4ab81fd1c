#!/usr/bin/env python3
"""Semaphore acquire + release latency (issue 15): a benchmark, not a test.

One node (scripts/node.py). After `--warmup` seconds, for `--seconds` seconds, one client
acquires and releases a permit of a semaphore of its own back to back
(`POST /_semaphores/{name}/_acquire` then `_release`, one keep-alive connection), and, in the
same run, the same loop on a plain lock (`/_locks/{key}`) for comparison, in alternating
rounds (4 of each). Prints the p50/p99 of
acquire + release (one round trip each) in milliseconds, and the markdown row for
bench/RESULTS.md.

    python3 bench/semaphores.py [--seconds 20] [--warmup 10] [--durability replicated]

Needs the plugin zip (`mvn package -DskipTests`)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "scripts"))

import node as esnode  # noqa: E402
from listing import Http  # noqa: E402


ROUNDS = 4


def loop(http: Http, base: str, body: dict, seconds: float) -> list[float]:
    """Acquire + release of `base` for `seconds`: each pair's milliseconds."""
    times = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        status, grant = http.call("POST", f"{base}/_acquire", body)
        assert status == 200, status
        status, _ = http.call("POST", f"{base}/_release",
                              {"owner": body["owner"], "fencing_token": grant["fencing_token"]})
        assert status == 200, status
        times.append((time.perf_counter() - started) * 1000)
    return times


def percentile(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100)[int(p) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--warmup", type=float, default=10)
    ap.add_argument("--durability", default="replicated", choices=["replicated", "memory"])
    args = ap.parse_args()
    node = esnode.Node("eslm-bench-semaphores", "node-0", esnode.free_port(), esnode.free_port(),
                       extra_settings={"locks.durability": args.durability})
    nodes = esnode.running(node)
    started = next(nodes)
    try:
        http = Http(started.http_port)
        semaphore = ("/_semaphores/bench-sem", {"owner": "bench", "permits": 1, "limit": 4})
        lock = ("/_locks/bench-lock", {"owner": "bench"})
        for base, body in (semaphore, lock):
            loop(http, base, body, args.warmup / 2)
        # Alternating rounds, so both see the same machine (other load, JIT, GC) as far as can be.
        times: dict[str, list[float]] = {"semaphore": [], "lock": []}
        for _ in range(ROUNDS):
            for name, (base, body) in (("semaphore", semaphore), ("lock", lock)):
                times[name] += loop(http, base, body, args.seconds / ROUNDS)
        figures = {name: (len(t), percentile(t, 50), percentile(t, 99)) for name, t in times.items()}
    finally:
        next(nodes, None)  # stops the node
    print("| durability | what | pairs | acquire + release p50 (ms) | p99 (ms) |")
    print("|---|---|---|---|---|")
    for name, (n, p50, p99) in figures.items():
        print(f"| {args.durability} | {name} | {n} | {p50:.2f} | {p99:.2f} |")

if __name__ == "__main__":
    main()
