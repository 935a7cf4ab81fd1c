#!/usr/bin/env python3
"""Where a plugin lock request spends the node's CPU: starts the bench node, records a Java
Flight Recording (JDK's `jcmd JFR.start`, sampling profiler) while `uncontended-64` (or the
workload named) runs against the plugin, and prints the hot methods plus the inclusive share of
CPU samples per layer (HTTP/Netty, REST parsing, transport/tasks, our Java, JNI/native, JSON).

    python3 bench/profile_plugin.py [--workload uncontended-64] [--duration 10] [--peer plugin]

Writes build/bench-profile/<peer>-<workload>.jfr and .txt."""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers as P  # noqa: E402
import run as R  # noqa: E402
from workloads import run as run_workload  # noqa: E402

# A sample is charged to the JNI layer if the native call is on its stack, else to the plugin's
# JSON conversions if one is, else to the innermost frame that matches one of the other layers.
FIRST = [
    ("JNI call into libeslm (Rust core + its JSON)", r"org\.eslm\.bridge\.NativeLockCore\.call"),
    ("plugin's JSON <-> Map conversions (XContent)",
     r"org\.eslm\.service\.LockService\.(parse|toJson|parseJson)|org\.eslm\.action\.TransportLockOpAction\.(argsFor|waitMs|partitionOf)"),
]
INNERMOST = [
    ("ES XContent (REST body parse / response render)", r"org\.elasticsearch\.xcontent\.|com\.fasterxml\."),
    ("ES tasks / transport / action plumbing", r"org\.elasticsearch\.(tasks|transport|action)\."),
    ("ES REST / HTTP layer", r"org\.elasticsearch\.(rest|http)\."),
    ("Netty (sockets, HTTP codec)", r"io\.netty\."),
    ("plugin Java (other)", r"org\.eslm\."),
    ("other Elasticsearch", r"org\.elasticsearch\."),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="uncontended-64")
    ap.add_argument("--peer", default="plugin")
    ap.add_argument("--duration", type=float, default=10.0)
    args = ap.parse_args()
    spec = next(s for s in R.WORKLOADS if s.name == args.workload)
    out = R.ROOT / "build" / "bench-profile"
    out.mkdir(parents=True, exist_ok=True)
    jdk = P.esnode.java_home()
    peer = P.PEERS[args.peer]()
    work = Path(tempfile.mkdtemp(prefix="eslm-profile-"))
    try:
        peer.start(work)
        pid = P.ES.pid()
        jfr_node = P.ES.node.home / "bench.jfr"
        run_workload(peer, spec, 2.0, 1.0, "warm")  # warm the JIT first
        as_es = P.esnode.run_as_prefix()
        subprocess.run([*as_es, f"{jdk}/bin/jcmd", str(pid), "JFR.start", "name=bench",
                        "settings=profile", f"filename={jfr_node}"], check=True,
                       capture_output=True)
        r = run_workload(peer, spec, args.duration, 0.5, "prof")
        subprocess.run([*as_es, f"{jdk}/bin/jcmd", str(pid), "JFR.stop", "name=bench"],
                       check=True, capture_output=True)
        time.sleep(0.5)
        jfr = out / f"{args.peer}-{args.workload}.jfr"
        jfr.write_bytes(jfr_node.read_bytes())
    finally:
        peer.stop()
        P.stop_shared()
    report = [f"{args.peer} {args.workload}: {r['grants_per_s']:.0f} pairs/s, server CPU "
              f"{r['server_cpu_ms_per_grant']:.3f} ms per pair, {r['server_cpu_pct']:.0f}% CPU", ""]
    hot = subprocess.run([f"{jdk}/bin/jfr", "view", "--width", "160", "hot-methods", str(jfr)],
                         capture_output=True, text=True).stdout
    report += [hot, ""]
    # inclusive attribution per layer from the stack samples
    text = subprocess.run([f"{jdk}/bin/jfr", "print", "--stack-depth", "128", "--events",
                           "jdk.ExecutionSample", str(jfr)], capture_output=True, text=True).stdout
    counts = collections.Counter()
    total = 0
    for ev in text.split("jdk.ExecutionSample")[1:]:
        frames = re.findall(r"^\s+([\w.$<>]+)\(", ev, re.M)
        if not frames:
            continue
        total += 1
        layer = "other (JDK only)"
        for name, pattern in FIRST:
            if any(re.match(pattern, fr) for fr in frames):
                layer = name
                break
        else:
            for fr in frames:  # innermost first
                hit = next((n for n, pat in INNERMOST if re.match(pat, fr)), None)
                if hit:
                    layer = hit
                    break
        counts[layer] += 1
    report.append(f"Inclusive CPU samples by layer ({total} samples of request and other threads):")
    for layer, n in counts.most_common():
        report.append(f"  {100.0 * n / total:5.1f}%  {layer}")
    txt = out / f"{args.peer}-{args.workload}.txt"
    txt.write_text("\n".join(report) + "\n")
    print("\n".join(report))
    print(f"wrote {jfr} and {txt}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
