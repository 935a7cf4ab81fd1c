#!/usr/bin/env python3
"""What the Python client (clients/python, `eslm`) costs over raw HTTP, per acquire+release
pair (issue 14): a benchmark, not a test.

One node (scripts/node.py), one client process, three ways of taking and releasing an
uncontended key of their own, in ONE run, in alternating rounds after a warm-up of each:

* **raw HTTP**: `http.client` with one keep-alive connection, `POST .../_acquire` and
  `POST .../_release` (the fencing token from the answer), JSON by hand;
* **official client**: the same two requests through `Elasticsearch.perform_request` (its
  transport, node pool, serializer, product check): the floor under `eslm`;
* **eslm**: `with locks.lock(key, lease="30s"): pass` — option checks, the request bodies, the
  answer read into a handle, a watchdog thread started and stopped, the release. Since issue 38
  this waits until granted (a try in this thread first, then a cancellable wait);
* **eslm, try once**: the same with `blocking=False`, the one request of 0.1.0's default, so the
  two rows side by side are the blocking path's cost on an uncontended key.

Each way's acquire requests per pair are read from the node's `_locks/_stats` (`acquires`):
the blocking path must not add a round trip.

    python3 bench/client_overhead.py [--pairs 5000] [--warmup 500] [--rounds 10]

Prints a JSON summary and the markdown table for bench/RESULTS.md; writes
build/bench-client/<date>.json. Needs the plugin zip (`mvn package -DskipTests`) and
`pip install 'elasticsearch>=9,<10'`."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "clients" / "python" / "src"), str(HERE)]

import node as esnode  # noqa: E402
from elasticsearch import Elasticsearch  # noqa: E402
from listing import Http  # noqa: E402
from run import machine, other_load  # noqa: E402

from eslm import Locks  # noqa: E402

HEADERS = {"accept": "application/json", "content-type": "application/json"}


def raw_pair(http: Http, key: str, owner: str) -> None:
    status, grant = http.call("POST", f"/_locks/{key}/_acquire", {"owner": owner, "lease": "30s"})
    assert status == 200, grant
    status, answer = http.call("POST", f"/_locks/{key}/_release",
                               {"owner": owner, "fencing_token": grant["fencing_token"]})
    assert status == 200, answer


def client_pair(es: Elasticsearch, key: str, owner: str) -> None:
    grant = es.perform_request("POST", f"/_locks/{key}/_acquire", body={"owner": owner, "lease": "30s"},
                               headers=HEADERS).body
    es.perform_request("POST", f"/_locks/{key}/_release",
                       body={"owner": owner, "fencing_token": grant["fencing_token"]}, headers=HEADERS)


def eslm_pair(locks: Locks, key: str) -> None:
    with locks.lock(key, lease="30s"):
        pass


def eslm_once_pair(locks: Locks, key: str) -> None:
    with locks.lock(key, lease="30s", blocking=False):
        pass


def acquires(http: Http) -> int:
    """The node's acquire requests received so far (`_locks/_stats`, `total.acquires`)."""
    status, stats = http.call("GET", "/_locks/_stats", None)
    assert status == 200, stats
    return stats["total"]["acquires"]


def timed(pair, n: int) -> tuple[list[float], float, float]:
    """`n` pairs back to back: each pair's latency (ms), the wall time of all (s) and the CPU
    time this process spent on them (s; less noisy than wall time on a shared machine)."""
    latencies = []
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        t0 = time.perf_counter()
        pair()
        latencies.append((time.perf_counter() - t0) * 1000)
    return latencies, time.perf_counter() - started, time.process_time() - cpu


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(ways: dict, pairs: int, warmup: int, rounds: int, count=None) -> dict:
    """Each way's pairs after a warm-up, in alternating rounds (no way always goes first): per way
    p50, p99, mean, pairs/s, client CPU per pair, and with `count` (the server's acquire requests
    so far) the acquire requests per pair. bench/tooz_locks.py measures its drivers with it too."""
    for pair in ways.values():
        timed(pair, warmup)
    latencies = {name: [] for name in ways}
    seconds, cpu, sent = dict.fromkeys(ways, 0.0), dict.fromkeys(ways, 0.0), dict.fromkeys(ways, 0)
    for r in range(rounds):
        order = list(ways) if r % 2 == 0 else list(reversed(ways))
        for name in order:
            before = count() if count else 0
            lat, wall, used = timed(ways[name], pairs // rounds)
            sent[name] += (count() - before) if count else 0
            latencies[name] += lat
            seconds[name] += wall
            cpu[name] += used
    figures = {name: {"pairs": len(lat), "p50_ms": round(statistics.median(lat), 3),
                      "p99_ms": round(percentile(lat, 0.99), 3), "mean_ms": round(statistics.fmean(lat), 3),
                      "pairs_per_s": round(len(lat) / seconds[name], 1),
                      "client_cpu_ms": round(cpu[name] * 1000 / len(lat), 3)}
               for name, lat in latencies.items()}
    if count:
        for name, f in figures.items():
            f["acquires_per_pair"] = round(sent[name] / f["pairs"], 3)
    return figures


def table(figures: dict) -> str:
    names = {"raw": "raw HTTP (http.client)", "client": "official client perform_request",
             "eslm": "eslm `with locks.lock(...)` (waits until granted)",
             "eslm_once": "eslm `with locks.lock(..., blocking=False)` (0.1.0's default)"}
    raw = figures["raw"]
    lines = ["| way | p50 (ms) | p99 (ms) | mean (ms) | pairs/s | client CPU per pair (ms) | "
             "p50 over raw HTTP (ms) | client CPU over raw HTTP (ms) | acquire requests per pair |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, f in figures.items():
        lines.append(f"| {names[name]} | {f['p50_ms']:.3f} | {f['p99_ms']:.3f} | {f['mean_ms']:.3f} | "
                     f"{f['pairs_per_s']:,.0f} | {f['client_cpu_ms']:.3f} | {f['p50_ms'] - raw['p50_ms']:+.3f} | "
                     f"{f['client_cpu_ms'] - raw['client_cpu_ms']:+.3f} | {f['acquires_per_pair']:.3f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5000, help="measured pairs per way")
    parser.add_argument("--warmup", type=int, default=500, help="pairs per way before measuring")
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds")
    args = parser.parse_args()
    started = dt.datetime.now(dt.timezone.utc)
    box = machine()
    node = esnode.Node("eslm-bench-client", "node-0", esnode.free_port(), esnode.free_port())
    for served in esnode.running(node):
        es = Elasticsearch(served.url)
        http = Http(served.http_port)
        locks = Locks(es, owner="bench-eslm")
        ways = {"raw": lambda: raw_pair(http, "bench-raw", "bench-raw"),
                "client": lambda: client_pair(es, "bench-client", "bench-client"),
                "eslm": lambda: eslm_pair(locks, "bench-eslm"),
                "eslm_once": lambda: eslm_once_pair(locks, "bench-eslm-once")}
        figures = measure(ways, args.pairs, args.warmup, args.rounds, lambda: acquires(http))
        box["loadavg_after"] = os.getloadavg()
        box["other_load"] = other_load()
        es.close()
    result = {"started_utc": started.isoformat(timespec="seconds"), "args": vars(args),
              "machine": box, "figures": figures}
    out = ROOT / "build" / "bench-client" / f"{started:%Y-%m-%dT%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    print()
    print(table(figures))
    eslm, client, once = figures["eslm"], figures["client"], figures["eslm_once"]
    print(f"\neslm over the official client per pair: p50 {eslm['p50_ms'] - client['p50_ms']:+.3f} ms, "
          f"client CPU {eslm['client_cpu_ms'] - client['client_cpu_ms']:+.3f} ms")
    print(f"the blocking path over one try per pair: p50 {eslm['p50_ms'] - once['p50_ms']:+.3f} ms, "
          f"client CPU {eslm['client_cpu_ms'] - once['client_cpu_ms']:+.3f} ms, acquire requests "
          f"{eslm['acquires_per_pair']:.3f} vs {once['acquires_per_pair']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
