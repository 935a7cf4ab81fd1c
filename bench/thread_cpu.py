#!/usr/bin/env python3
"""Where three plugin nodes spend their CPU in a hand-off, and how long their JIT takes to
settle (bench/RESULTS.md, "Warm-up, routing like for like, and where the CPU goes").

Starts plugin-3 (bench/peers.py: three nodes, `.locks` with one replica), runs `contended-16` in
back-to-back windows from the first request on, and prints per window the critical sections/s
and hand-off p50 (the warm-up curve); then the owner's batch round trip from its diagnostics.
Over the last window it prints each node's CPU per grant
split by thread pool: the per-thread CPU from /proc/<pid>/task, the thread names from
`jcmd Thread.print` (the kernel keeps only the first 15 characters of a name).

    python3 bench/thread_cpu.py [--windows 9] [--window-s 10] [--route spread|owner]

Uses the plugin zip as built (`mvn -B -q package -DskipTests`)."""

from __future__ import annotations

import argparse
import collections
import faulthandler
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers as P  # noqa: E402
from workloads import Spec, run as run_workload  # noqa: E402

CONTENDED = Spec("contended-16", 16, contended=True, hold_s=0.001)


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds so far (user + system) of each live thread of `pid`."""
    return {tid: P.stat_cpu_seconds(f) for tid, f in P.esnode.thread_stats(pid).items()}


def thread_pools(pid: int) -> dict[int, str]:
    """Thread id -> its pool, from the JVM's own names: `elasticsearch[node-1][transport_worker][T#2]`
    becomes `transport_worker`, `C2 CompilerThread0` becomes `C# CompilerThread#`."""
    dump = subprocess.run([*P.esnode.run_as_prefix(pid=pid), f"{P.esnode.java_home()}/bin/jcmd", str(pid),
                           "Thread.print"], capture_output=True, text=True, timeout=60).stdout
    pools = {}
    for m in re.finditer(r'^"([^"]+)".*?nid=(0x[0-9a-f]+|\d+)', dump, re.M):
        name = re.sub(r"^elasticsearch\[[^\]]*\]\[\[?([^\]]+)\]?\].*", r"\1", m.group(1))
        pools[int(m.group(2), 0)] = re.sub(r"\d+", "#", name)
    return pools


def main() -> int:
    # SIGUSR1 prints every thread's stack (tests/test_bench_smoke.py asks a run that hangs)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--windows", type=int, default=9, help="back-to-back measured windows (default 9)")
    ap.add_argument("--window-s", type=float, default=10.0, help="seconds per window (default 10)")
    ap.add_argument("--route", choices=("spread", "owner"), default="spread",
                    help="client i to node i mod 3 (default), or every client to the owner")
    args = ap.parse_args()
    if args.windows < 1 or args.window_s <= 0:
        ap.error("--windows must be at least 1 and --window-s positive")
    if P.esnode.extra_java_options():
        print(f"note: nodes run with ${P.esnode.NODE_JAVA_OPTS_ENV}={P.esnode.extra_java_options()}"
              " (the tests' speed-up): CPU per grant is not a user's node's")
    peer = P.PEERS["plugin-3"]()
    peer.route = args.route
    peer.start(Path(tempfile.mkdtemp(prefix="eslm-thread-cpu-")))
    try:
        pids = peer.server_pid()
        for w in range(args.windows):
            before = [thread_cpu(pid) for pid in pids]
            r = run_workload(peer, CONTENDED, args.window_s, 0.0, f"w{w}")
            after = [thread_cpu(pid) for pid in pids]
            print(f"window {w + 1}: {r['grants_per_s']:.0f} critical sections/s, hand-off p50 "
                  f"{r['handoff_p50_ms']:.2f} ms", flush=True)
        trip = P.replication_figures(peer.owner)
        if trip:
            print(f"the owner's batch round trip to every copy (diagnostics, last 1024 batches): "
                  f"p50 {trip['replication_round_trip_p50_ms']:.3f} ms, "
                  f"p99 {trip['replication_round_trip_p99_ms']:.3f} ms")
        grants = r["grants_per_s"] * args.window_s
        print(f"\nlast window, CPU ms per grant by thread pool (owner {peer.owner.name}, "
              f"clients {args.route}):")
        for node, pid, b, a in zip(peer.cluster.nodes, pids, before, after):
            pools = thread_pools(pid)
            per_pool = collections.Counter()
            for tid, cpu in a.items():
                per_pool[pools.get(tid, "?")] += cpu - b.get(tid, 0.0)
            top = ", ".join(f"{k} {v * 1000 / grants:.3f}" for k, v in per_pool.most_common(5) if v > 0)
            print(f"  {node.name}: {sum(per_pool.values()) * 1000 / grants:.3f} in total; {top}")
    finally:
        peer.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
