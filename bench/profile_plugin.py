#!/usr/bin/env python3
"""Where a plugin lock request spends the node's CPU: starts the bench node and, while
`uncontended-64` (or the workload named) runs against the plugin, records

* a Java Flight Recording (`jcmd JFR.start`, sampling profiler): hot methods and the inclusive
  share of Java samples per layer (HTTP/Netty, REST parsing, transport/tasks, our Java, JSON).
  JFR samples only threads running Java code, so it cannot see the native library;
* then, with `--perf`, a `perf record -g` of the whole node process for a second window of the
  same length (JIT frames named through `jcmd Compiler.perfmap`): every CPU cycle of the node,
  native code, kernel (loopback TCP, scheduling) and JVM (GC, JIT compiler) included, split by
  where the innermost frame is.

    python3 bench/profile_plugin.py [--workload uncontended-64] [--duration 10] [--peer plugin] [--perf]

Writes build/bench-profile/<peer>-<workload>.jfr, .perf.data and .txt."""

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


# perf: the innermost frame decides, by its object (kernel, libjvm, libeslm, libc) or, for JIT
# code, by the package of the method (the name before its argument list, not the return type).
PERF_LAYERS = [
    ("kernel (loopback TCP, epoll, scheduling)", lambda dso, m: dso.startswith("[kernel")),
    ("lock core + bridge (libeslm, Rust)", lambda dso, m: dso == "libeslm.so"),
    ("JVM runtime (GC, JIT compiler, interpreter, stubs, JNI glue)",
     lambda dso, m: dso == "libjvm.so" or (dso.startswith("[JIT]") and not m)),
    ("libc (malloc, memcpy; from the JVM and libeslm)", lambda dso, m: dso.startswith("libc")),
    ("Netty (sockets, HTTP codec)", lambda dso, m: m.startswith("io.netty.")),
    ("plugin Java (org.eslm)", lambda dso, m: m.startswith("org.eslm.")),
    ("XContent / Jackson (JSON parse and render)",
     lambda dso, m: m.startswith(("org.elasticsearch.xcontent.", "com.fasterxml."))),
    ("Elasticsearch (REST, tasks, transport, other)", lambda dso, m: m.startswith("org.elasticsearch.")),
    ("JDK classes (collections, strings, NIO, concurrency)",
     lambda dso, m: m.startswith(("java.", "jdk.", "sun."))),
]


def perf_profile(pid: int, peer, spec, args, out: Path) -> list[str]:
    """Samples the whole node process with perf while the workload runs again; answers report
    lines: the share of cycles per layer and the hottest symbols."""
    jdk = P.esnode.java_home()
    data = out / f"{args.peer}-{args.workload}.perf.data"
    rec = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p", str(pid), "-o", str(data)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        r = run_workload(peer, spec, args.duration, 0.5, "perf", procs=args.client_procs)
    finally:
        rec.send_signal(2)  # SIGINT: perf writes its data and exits
        rec.wait(timeout=60)
    # JIT code is named by the map the JVM writes now (/tmp/perf-<pid>.map, owned by the node's
    # user, hence perf report -f).
    subprocess.run([*P.esnode.run_as_prefix(pid=pid), f"{jdk}/bin/jcmd", str(pid), "Compiler.perfmap"],
                   check=True, capture_output=True)
    text = subprocess.run(["perf", "report", "-f", "-i", str(data), "--no-children", "--stdio",
                           "-g", "none", "--sort", "dso,sym", "--percent-limit", "0"],
                          capture_output=True, text=True).stdout
    rows = []
    for line in text.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(.+?)\s+\[[.k]\]\s+(.*?)\s*$", line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3)))
    layers = collections.Counter()
    for pct, dso, sym in rows:
        method = re.search(r"([\w.$/]+)\(", sym)
        method = method.group(1) if dso.startswith("[JIT]") and method else ""
        layer = next((name for name, match in PERF_LAYERS if match(dso, method)), "other")
        layers[layer] += pct
    lines = [f"perf, whole node process ({r['grants_per_s']:.0f} pairs/s while recorded, server CPU "
             f"{r['server_cpu_ms_per_grant']:.3f} ms per pair), share of cycles by innermost frame:"]
    lines += [f"  {pct:5.1f}%  {layer}" for layer, pct in layers.most_common()]
    lines += ["", "hottest symbols:"]
    lines += [f"  {pct:5.2f}%  {dso.split(' tid ')[0]:<18} {sym[:110]}" for pct, dso, sym in rows[:30]]
    return lines


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="uncontended-64")
    ap.add_argument("--peer", default="plugin")
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--perf", action="store_true", help="also record the whole process with perf")
    ap.add_argument("--client-procs", type=int, default=4, help="client processes (as bench/run.py)")
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
        run_workload(peer, spec, 10.0, 1.0, "warm", procs=args.client_procs)  # warm the JIT first
        as_es = P.esnode.run_as_prefix(pid=pid)
        subprocess.run([*as_es, f"{jdk}/bin/jcmd", str(pid), "JFR.start", "name=bench",
                        "settings=profile", f"filename={jfr_node}"], check=True,
                       capture_output=True)
        r = run_workload(peer, spec, args.duration, 0.5, "prof", procs=args.client_procs)
        subprocess.run([*as_es, f"{jdk}/bin/jcmd", str(pid), "JFR.stop", "name=bench"],
                       check=True, capture_output=True)
        time.sleep(0.5)
        jfr = out / f"{args.peer}-{args.workload}.jfr"
        jfr.write_bytes(jfr_node.read_bytes())
        perf_report = perf_profile(pid, peer, spec, args, out) if args.perf else []
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
    report += [""] + perf_report
    txt = out / f"{args.peer}-{args.workload}.txt"
    txt.write_text("\n".join(report) + "\n")
    print("\n".join(report))
    print(f"wrote {jfr} and {txt}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
