#!/usr/bin/env python3
"""Listing a million held locks while lock traffic goes on (issue 13): a benchmark, not a test.

One node (scripts/node.py, 2 GB heap: see `--heap`) holds `--locks` locks (default 1,000,000), loaded with
multi-acquire requests of `--batch` keys (`locks.max_keys_per_request` raised to match) from
`--loaders` client processes. Then, side by side in one run, alternating rounds of
`--round` seconds, after `--warmup` seconds of both (not counted: the JIT warms up):

* **without listing**: one steady client (its own process) acquires and releases a key of its
  own back to back; acquire and release latency are recorded separately;
* **with listing**: the same steady client while another process pages continuously through
  the whole list (`GET /_locks?size=1000&after=<next>`, starting over at the end); page latency
  and full passes are recorded too. One kind of round per `--max-busy` value: the node's
  `locks.listing.max_busy` (the share of one core listing may keep busy) is set before each,
  so paced (0.25, the default) and unpaced (1.0) listing are measured side by side.

Issue 13's goal: acquire latency during continuous listing within 2x of without, pages prompt.

    python3 bench/listing.py [--locks 1000000] [--durability replicated] [--rounds 4] [--round 15]

Prints a JSON summary and the markdown table for bench/RESULTS.md; writes
build/bench-listing/<date>.json. Needs the plugin zip (`mvn package -DskipTests`)."""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import multiprocessing as mp
import os
import socket
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "scripts"))

import node as esnode  # noqa: E402


class Http:
    """One keep-alive connection, JSON in and out (as bench/peers.py's client)."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def call(self, method: str, path: str, body=None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        self.conn.request(method, path, body=data, headers=headers)
        r = self.conn.getresponse()
        raw = r.read()
        return r.status, (json.loads(raw) if raw else {})


def load(port: int, first: int, last: int, batch: int) -> None:
    """Holds keys `lk-<first>` .. `lk-<last - 1>`, `batch` keys per multi-acquire."""
    h = Http(port)
    for start in range(first, last, batch):
        keys = [{"key": f"lk-{i:07d}"} for i in range(start, min(start + batch, last))]
        status, body = h.call("POST", "/_locks/_acquire",
                              {"owner": f"owner-{start // batch % 1000:03d}", "locks": keys,
                               "lease": "100m"})
        assert status == 200, (status, body)


def steady(port: int, seconds: float, out) -> None:
    """Acquire + release of one key of its own, back to back, for `seconds`."""
    h = Http(port)
    acq, rel = [], []
    token = None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        status, g = h.call("POST", "/_locks/steady-key/_acquire", {"owner": "steady"})
        t1 = time.perf_counter()
        assert status == 200 and g["acquired"], g
        token = g["fencing_token"]
        status, r = h.call("POST", "/_locks/steady-key/_release",
                           {"owner": "steady", "fencing_token": token})
        t2 = time.perf_counter()
        assert status == 200, r
        acq.append((t1 - t0) * 1000)
        rel.append((t2 - t1) * 1000)
    out.put({"acquire_ms": acq, "release_ms": rel})


def lister(port: int, stop, out, nice: int) -> None:
    """Pages through the whole list, 1000 a page, over and over, until `stop` is set. Runs
    `nice`: parsing a page of 1000 locks in Python costs this client about as much CPU as the
    node spends serving it, and in production a lister is not on the node's cores."""
    os.nice(nice)
    h = Http(port)
    pages, passes, after, listed, pass_started = [], [], None, 0, time.monotonic()
    while not stop.is_set():
        path = "/_locks?size=1000" + (f"&after={after}" if after else "")
        t0 = time.perf_counter()
        status, page = h.call("GET", path)
        pages.append((time.perf_counter() - t0) * 1000)
        assert status == 200, page
        listed += len(page["locks"])
        after = page["next"]
        if after is None:
            passes.append({"seconds": time.monotonic() - pass_started, "locks": listed})
            listed, pass_started = 0, time.monotonic()
    out.put({"page_ms": pages, "passes": passes, "partial_pass_locks": listed})


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (/proc/<pid>/stat, fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_round(port: int, seconds: float, listing: bool, node_pid: int, nice: int) -> dict:
    ctx = mp.get_context("fork")
    out, lout, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
    lp = None
    cpu0, wall0 = cpu_seconds(node_pid), time.monotonic()
    if listing:
        lp = ctx.Process(target=lister, args=(port, stop, lout, nice))
        lp.start()
        time.sleep(1.0)  # the lister is paging before the steady client starts measuring
    sp = ctx.Process(target=steady, args=(port, seconds, out))
    sp.start()
    result = out.get()
    sp.join()
    if lp is not None:
        stop.set()
        result.update(lout.get())
        lp.join()
    result["node_cpu_s"] = cpu_seconds(node_pid) - cpu0
    result["wall_s"] = time.monotonic() - wall0
    return result


def summary(rounds: list[tuple[str, dict]]) -> dict:
    """Figures per kind of round: "without" listing, and "with <share>" for each
    `locks.listing.max_busy` the lister ran under."""
    out: dict = {"modes": {}}
    for mode in dict.fromkeys(m for m, _ in rounds):
        rs = [r for m, r in rounds if m == mode]
        acq = [x for r in rs for x in r["acquire_ms"]]
        rel = [x for r in rs for x in r["release_ms"]]
        s = {"pairs": len(acq), "acquire_p50_ms": pct(acq, 50), "acquire_p99_ms": pct(acq, 99),
             "release_p50_ms": pct(rel, 50), "release_p99_ms": pct(rel, 99)}
        if mode != "without":
            pages = [x for r in rs for x in r["page_ms"]]
            s.update({"pages": len(pages), "page_p50_ms": pct(pages, 50),
                      "page_p99_ms": pct(pages, 99), "page_max_ms": max(pages, default=0),
                      "full_passes": [p for r in rs for p in r["passes"]]})
        s["node_cpu_s"] = sum(r["node_cpu_s"] for r in rs)
        s["wall_s"] = sum(r["wall_s"] for r in rs)
        s["node_cores"] = s["node_cpu_s"] / s["wall_s"]
        out["modes"][mode] = s
    wo = out["modes"]["without"]
    for mode, w in out["modes"].items():
        if mode == "without":
            continue
        # The node's CPU beyond what the steady client alone costs it, per page served.
        extra = w["node_cpu_s"] - wo["node_cores"] * w["wall_s"]
        w["node_cpu_ms_per_page"] = 1000 * extra / w["pages"] if w["pages"] else float("nan")
        w["acquire_p50_ratio"] = w["acquire_p50_ms"] / wo["acquire_p50_ms"]
        w["acquire_p99_ratio"] = w["acquire_p99_ms"] / wo["acquire_p99_ms"]
    return out


def table(s: dict) -> str:
    modes = s["modes"]
    names = list(modes)
    head = ["without listing"] + [f"with continuous listing, max_busy {m.split()[1]}" for m in names[1:]]
    rows = [
        ("acquire p50 (ms)", "acquire_p50_ms"), ("acquire p99 (ms)", "acquire_p99_ms"),
        ("release p50 (ms)", "release_p50_ms"), ("release p99 (ms)", "release_p99_ms"),
        ("acquire+release pairs measured", "pairs"), ("node CPU (cores busy)", "node_cores"),
        ("acquire p99 with / without listing", "acquire_p99_ratio"),
        ("acquire p50 with / without listing", "acquire_p50_ratio"),
        ("list pages served (size 1000)", "pages"), ("page p50 (ms, over HTTP)", "page_p50_ms"),
        ("page p99 (ms, over HTTP)", "page_p99_ms"), ("node CPU per page served (ms)", "node_cpu_ms_per_page"),
    ]
    lines = ["| figure | " + " | ".join(head) + " |", "|---|" + "---:|" * len(names)]
    for label, field in rows:
        cells = []
        for m in names:
            v = modes[m].get(field)
            cells.append("–" if v is None else f"{v:,}" if isinstance(v, int) else f"{v:.2f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for m in names[1:]:
        passes = modes[m]["full_passes"]
        lines.append("")
        lines.append(f"{m}: " + (f"{len(passes)} full passes over the list, {passes[0]['locks']:,} locks "
                                 f"in {passes[0]['seconds']:.1f} s (first)." if passes
                                 else "no full pass completed within the rounds."))
    lines += ["", "Goal (issue 13): acquire latency during continuous listing within 2x of without."]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locks", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--loaders", type=int, default=2)
    ap.add_argument("--durability", default="replicated", choices=["replicated", "memory"])
    ap.add_argument("--rounds", type=int, default=4, help="rounds of each kind, alternating")
    ap.add_argument("--round", type=float, default=15.0, help="seconds per round")
    ap.add_argument("--warmup", type=float, default=15.0,
                    help="seconds of steady client + lister before the rounds, not counted")
    # A production-sized heap: with 1 GB or less Elasticsearch reads HTTP into unpooled 64 KB
    # buffers (its NettyAllocator), ~110 KB of garbage per request (JFR), a young GC a second.
    ap.add_argument("--heap", default="2g")
    ap.add_argument("--lister-nice", type=int, default=10,
                    help="niceness of the lister process (0: as the node and the steady client)")
    ap.add_argument("--max-busy", default="1.0,0.25",
                    help="locks.listing.max_busy values the lister runs under, one kind of round "
                         "each (1.0: unpaced; 0.25: the default)")
    ap.add_argument("--plugin-zip", type=Path, default=None,
                    help="the plugin zip to install (default: the build's, scripts/node.py)")
    args = ap.parse_args()

    version = esnode.es_version()
    node = esnode.Node("eslm-bench-listing", "node-0", esnode.free_port(), esnode.free_port(),
                       heap=args.heap,
                       # The limits' defaults (1,000,000 locks, 10 % of the heap) are below
                       # what a million held locks plus the steady client's need.
                       extra_settings={"locks.durability": args.durability,
                                       "locks.limits.max_locks": args.locks + 1000,
                                       "locks.limits.max_memory": "50%",
                                       "locks.max_keys_per_request": args.batch,
                                       "locks.lease.max": "2h"})
    node.install(version, args.plugin_zip or esnode.plugin_zip(version))
    node.start()
    try:
        node.wait_until_ready()
        started = time.monotonic()
        ctx = mp.get_context("fork")
        per = -(-args.locks // args.loaders)
        procs = [ctx.Process(target=load, args=(node.http_port, i * per,
                                                  min(args.locks, (i + 1) * per), args.batch))
                 for i in range(args.loaders)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
            assert p.exitcode == 0, "a loader failed (see its traceback above)"
        load_s = time.monotonic() - started
        status, stats = Http(node.http_port).call("GET", "/_locks/_stats")
        held = sum(n["locks"]["held"] for n in stats["nodes"].values()) if status == 200 else stats
        print(f"loaded {args.locks:,} locks in {load_s:.1f} s; _locks/_stats held: {held}", flush=True)
        pid = node.server_pid()
        warm = run_round(node.http_port, args.warmup, True, pid, args.lister_nice)  # JIT warm-up, not counted
        print(f"warm-up: {len(warm['acquire_ms'])} pairs, {len(warm['page_ms'])} pages", flush=True)
        rounds = []
        shares = [float(x) for x in args.max_busy.split(",")]
        for i in range(args.rounds):
            for share in [None] + shares:
                if share is not None:
                    status, body = Http(node.http_port).call(
                        "PUT", "/_cluster/settings", {"persistent": {"locks.listing.max_busy": share}})
                    assert status == 200, body
                mode = "without" if share is None else f"with {share}"
                r = run_round(node.http_port, args.round, share is not None, pid, args.lister_nice)
                rounds.append((mode, r))
                print(f"round {i} {mode}: {len(r['acquire_ms'])} pairs, "
                      f"acquire p50 {pct(r['acquire_ms'], 50):.2f} ms, p99 {pct(r['acquire_ms'], 99):.2f} ms",
                      flush=True)
        s = summary(rounds)
        s.update({"locks": args.locks, "durability": args.durability, "heap": args.heap,
                  "load_seconds": load_s, "batch": args.batch, "loaders": args.loaders,
                  "round_seconds": args.round, "rounds": args.rounds, "warmup_seconds": args.warmup,
                  "lister_nice": args.lister_nice, "max_busy": shares, "plugin_zip": str(args.plugin_zip or ""),
                  "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                  "cpus": os.cpu_count(), "loadavg": os.getloadavg()})
        out = ROOT / "build" / "bench-listing"
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{dt.date.today()}.json").write_text(json.dumps(s, indent=1))
        print(json.dumps({k: v for k, v in s.items()}, indent=1, default=str))
        print(table(s))
    finally:
        node.stop()


if __name__ == "__main__":
    main()
