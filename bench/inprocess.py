"""The in-process figures of a benchmark run (issue 6): the Rust lock core alone (criterion,
`cargo bench -p lock-core`) and one lock operation through the JNI bridge (JMH, `bench/jmh/`)
next to a plain Java `ConcurrentHashMap` lock table. No network, no Elasticsearch: what the
lock itself costs, so the REST figures can be read against it.

Both need what `make build` leaves behind (the release `libeslm.so`, the plugin jar)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CRITERION = ROOT / "target" / "criterion"
JMH_JSON = HERE / "jmh" / "target" / "jmh.json"

# JMH benchmark method -> what the row says
JMH_ROWS = {
    "jniAcquireRelease": "acquire + release through the bridge (2 JNI calls, JSON in and out)",
    "jniVersionCall": "one bare JNI call returning a short string",
    "chmAcquireRelease": "ConcurrentHashMap putIfAbsent + remove (plain Java lock table)",
}


def run(quick: bool, log=print) -> dict:
    """Runs both benchmarks; answers {"criterion": {id: {...}}, "jmh": {name: {...}}, "errors": []}.
    A failure of one is recorded, not raised: the peer figures of the run stay valid."""
    out: dict = {"criterion": {}, "jmh": {}, "errors": []}
    for name, step in (("criterion", _criterion), ("jmh", _jmh)):
        t0 = time.monotonic()
        try:
            out[name] = step(quick, log)
            log(f"    {name}: {len(out[name])} figures in {time.monotonic() - t0:.0f} s")
        except Exception as e:  # noqa: BLE001 - reported with the run's errors
            out["errors"].append(f"in-process {name}: {type(e).__name__}: {e}")
            log(f"!! in-process {name} failed: {e}")
    return out


def _criterion(quick: bool, log) -> dict:
    # Quick mode: one benchmark, very short, so the smoke test proves the pipeline only; built with
    # the dev profile, about a minute of CPU on a fresh clone (an optimized criterion is minutes of
    # compiling, which in a loaded CI lane outlasted the smoke test's 900 s).
    args = (["--warm-up-time", "0.2", "--measurement-time", "0.5", "--sample-size", "10",
             "uncontended/table$"] if quick else [])
    profile = ["--profile", "dev"] if quick else []
    cmd = ["cargo", "bench", "--locked", *profile, "-p", "lock-core", "--bench", "lock_core", "--",
           "--noplot", *args]
    log("in-process: " + " ".join(cmd))
    started = time.time()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   timeout=1800)
    figures = {}
    for est in sorted(CRITERION.glob("**/new/estimates.json")):
        if est.stat().st_mtime < started:
            continue  # an older run's figure
        meta = json.loads((est.parent / "benchmark.json").read_text())
        e = json.loads(est.read_text())
        elements = (meta.get("throughput") or {}).get("Elements", 1)
        mean = e["mean"]
        figures[meta["full_id"]] = {
            "ns_per_iter": mean["point_estimate"],
            "ci95_ns": [mean["confidence_interval"]["lower_bound"],
                        mean["confidence_interval"]["upper_bound"]],
            "elements_per_iter": elements,
            "per_s": elements * 1e9 / mean["point_estimate"],
        }
    if not figures:
        raise RuntimeError("cargo bench wrote no estimates")
    return figures


def _jmh(quick: bool, log) -> dict:
    opts = (["-f", "1", "-wi", "1", "-w", "200ms", "-i", "1", "-r", "300ms"] if quick
            else ["-f", "1", "-wi", "3", "-i", "5"])
    cmd = ["bash", str(HERE / "jmh" / "run.sh"), *opts]
    log("in-process: " + " ".join(["bench/jmh/run.sh", *opts]))
    if JMH_JSON.exists():
        JMH_JSON.unlink()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   timeout=1800, env={**os.environ})
    figures = {}
    for b in json.loads(JMH_JSON.read_text()):
        name = b["benchmark"].rsplit(".", 1)[1]
        m = b["primaryMetric"]
        if m["scoreUnit"] != "ns/op":
            raise RuntimeError(f"{name}: unexpected unit {m['scoreUnit']}")
        err = m.get("scoreError")
        figures[name] = {"ns_per_op": m["score"],
                         "error_ns": err if isinstance(err, (int, float)) else None,
                         "jdk": b.get("jdkVersion"), "what": JMH_ROWS.get(name, name)}
    return figures


def table(inproc: dict) -> str:
    """The in-process rows of RESULTS.md."""
    rows = ["| figure | per operation | per second | source |", "|---|---:|---:|---|"]
    crit = inproc.get("criterion", {})
    labels = {
        "uncontended/table": "lock core: acquire + release, record API, 1 thread",
        "uncontended/partition": "lock core: same through a `Partition` (mutex), record API",
        "uncontended/two_threads": "lock core: 2 threads, 2 partitions, record API (total)",
        "handoff/100": "lock core: hand-off to the next of 100 waiters",
        "handoff/10000": "lock core: hand-off to the next of 10,000 waiters",
        "tree/depth8": "lock core: tree lock, depth 8, acquire + release",
        "events/drain": "lock core: drain + serialize one event",
    }
    for key, label in labels.items():
        if key in crit:
            c = crit[key]
            per_op = c["ns_per_iter"] / c["elements_per_iter"]
            rows.append(f"| {label} | {per_op:,.0f} ns | {c['per_s']:,.0f} | criterion `{key}` |")
    for name, fig in inproc.get("jmh", {}).items():
        err = f" ± {fig['error_ns']:,.0f}" if fig.get("error_ns") is not None else ""
        rows.append(f"| JVM: {fig['what']} | {fig['ns_per_op']:,.0f}{err} ns | "
                    f"{1e9 / fig['ns_per_op']:,.0f} | JMH `{name}` |")
    return "\n".join(rows)
