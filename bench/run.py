#!/usr/bin/env python3
"""Lock-service benchmark: this plugin against the peers a user would pick instead, side by side,
one run, one machine (issue 6). See bench/README.md.

    python3 bench/run.py            # full run (~15 min): results/<date>.json + .png, RESULTS.md
    python3 bench/run.py --quick    # smoke mode, a few seconds per workload, writes to build/
    python3 bench/run.py --replicated   # plugin on 3 nodes vs ZooKeeper and etcd ensembles of 3

Installs what is missing (apt: zookeeper, etcd-server, redis-server; pip: kazoo, redis,
matplotlib), starts every server on a free 127.0.0.1 port, runs each workload for a fixed time,
stops everything it started (also on Ctrl-C / SIGTERM), then runs the in-process benchmarks
(criterion for the lock core, JMH for the JNI bridge; bench/inprocess.py) on the idle machine."""

from __future__ import annotations

import argparse
import datetime as dt
import faulthandler
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import failover  # noqa: E402
import inprocess  # noqa: E402
import peers as P  # noqa: E402
import report  # noqa: E402
from workloads import Spec, run as run_workload  # noqa: E402

BASE_PEERS = ["plugin", "doc-recipe", "zookeeper", "etcd", "redis", "es-floor"]
# --replicated (issue 12): the three-server peers and their single-server peers, same run; the
# single-node plugin twice: with the default locks.durability (replicated: logged and fsynced)
# and with `memory` (the behaviour the full runs before replication measured)
REPLICATED_PEERS = ["plugin-3", "zookeeper-3", "etcd-3", "plugin", "plugin-memory", "zookeeper",
                    "etcd"]
# issue 15: a semaphore permit beside the lock pair, and election failover on three nodes
FAILOVER = {"election-failover": "leader-node", "election-owner-loss": "owner"}
REPLICATED_WORKLOADS = ["uncontended-1", "semaphore-1", "contended-16", *FAILOVER]
FLOOR_ONLY = ("uncontended-1", "uncontended-64")  # the floor is not a lock: only these

WORKLOADS = [
    Spec("uncontended-1", 1, contended=False),
    # one permit of a limit-4 semaphore, right after the lock pair (peers with a semaphore only)
    Spec("semaphore-1", 1, contended=False, semaphore=True),
    Spec("uncontended-16", 16, contended=False),
    Spec("uncontended-64", 64, contended=False),
    Spec("contended-16", 16, contended=True, hold_s=0.001),
    Spec("contended-64", 64, contended=True, hold_s=0.001),
]
# mixed priority: 4 background clients loop back to back on one key; 2 foreground clients come
# every 10-30 ms; both hold ~1 ms. (peer, use_priority)
MIXED = Spec("mixed-priority", 6, contended=True, hold_s=0.001, background=4,
             fg_think_s=(0.010, 0.030))
MIXED_PEERS = [("plugin", True), ("zookeeper-prefix", True), ("plugin", False),
               ("zookeeper", False)]


def machine() -> dict:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    os_name = "?"
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory": mem, "os": os_name,
            "kernel": platform.release(), "python": platform.python_version(),
            "loadavg_before": os.getloadavg()}


def other_load() -> list[str]:
    """Heavy processes not started by this run (others' builds and tests share the CPU): %CPU
    as `ps` reports it, over each process's lifetime; this process and its children left out."""
    try:
        rows = [line.split(None, 3) for line in subprocess.run(
            ["ps", "-eo", "pid,ppid,pcpu,comm", "--sort=-pcpu"], capture_output=True, text=True,
            timeout=5).stdout.splitlines()[1:]]
    except Exception:
        return []
    parent = {int(r[0]): int(r[1]) for r in rows if len(r) == 4}

    def ours(pid: int) -> bool:
        while pid > 1:
            if pid == os.getpid():
                return True
            pid = parent.get(pid, 1)
        return False

    return [f"{r[0]} {r[2]} {r[3]}" for r in rows[:12]
            if len(r) == 4 and float(r[2]) >= 20.0 and not ours(int(r[0]))]


def main() -> int:
    # SIGUSR1 prints every thread's stack (tests/test_bench_smoke.py asks a run that hangs)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke mode: ~1.5 s per workload")
    ap.add_argument("--duration", type=float, help="measured seconds per workload (default 15, quick 1.5)")
    ap.add_argument("--warmup", type=float, help="warm-up seconds per workload (default 2, quick 0.5)")
    ap.add_argument("--peers", help="comma-separated peers (default: %s; also %s)"
                    % (",".join(BASE_PEERS), ", ".join(["plugin-memory", *P.THREE])))
    ap.add_argument("--workloads", default="", help="comma-separated subset of workload names")
    ap.add_argument("--replicated", action="store_true",
                    help="the three-node comparison (issue 12): --peers %s --workloads %s "
                    "--no-inprocess unless given; writes <date>-replicated.json and RESULTS.md's "
                    "replicated section" % (",".join(REPLICATED_PEERS), ",".join(REPLICATED_WORKLOADS)))
    ap.add_argument("--three-node-route", choices=("spread", "owner"), default="spread",
                    help="the three-server peers' clients: client i to node i mod 3 (spread, "
                    "default) or all to the node owning lock partition 0, the ensembles' to their "
                    "leader (owner)")
    ap.add_argument("--three-node-setting", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for plugin-3's nodes (-E KEY=VALUE), repeatable; e.g. "
                    "locks.durability=replicated")
    ap.add_argument("--jit-warmup", type=float, metavar="SECONDS",
                    help="unrecorded JIT warm-up per JVM peer (default 10, quick 1): 16 clients on "
                    "their own keys, then as long on one key when a contended workload is chosen")
    ap.add_argument("--plugin-heap", default=P.PLUGIN_HEAP, metavar="SIZE",
                    help="heap of every plugin node, -Xms=-Xmx (default %(default)s; with 1g or "
                    "less Elasticsearch reads HTTP into unpooled buffers)")
    ap.add_argument("--failover-reps", type=int, metavar="N",
                    help="node kills per election failover workload on plugin-3 (default 3, quick 1)")
    ap.add_argument("--out", help="folder for <date>.json/.png (default bench/results, quick: build/bench-quick)")
    ap.add_argument("--no-results-md", action="store_true", help="do not update bench/RESULTS.md")
    ap.add_argument("--no-install", action="store_true", help="fail instead of installing peers")
    ap.add_argument("--client-procs", type=int, default=4,
                    help="client processes for the uncontended workloads (default 4; 1 = all threads in one)")
    ap.add_argument("--no-inprocess", action="store_true", help="skip the criterion and JMH benchmarks")
    ap.add_argument("--no-build", action="store_true",
                    help="use the plugin zip and libeslm.so as built (default: mvn package -DskipTests first)")
    args = ap.parse_args()

    duration = args.duration or (1.5 if args.quick else 15.0)
    warmup = args.warmup if args.warmup is not None else (0.5 if args.quick else 2.0)
    jit_s = args.jit_warmup if args.jit_warmup is not None else (1.0 if args.quick else 10.0)
    if jit_s < 0:
        ap.error("--jit-warmup must not be negative")
    if args.replicated:
        args.peers = args.peers or ",".join(REPLICATED_PEERS)
        args.workloads = args.workloads or ",".join(REPLICATED_WORKLOADS)
        args.no_inprocess = True
    peers = [p for p in (args.peers or ",".join(BASE_PEERS)).split(",") if p]
    for p in peers:
        if p not in P.PEERS:
            ap.error(f"unknown peer {p}; known: {', '.join(P.PEERS)}")
    wl_filter = set(w for w in args.workloads.split(",") if w)
    known = [w.name for w in WORKLOADS] + [MIXED.name, *FAILOVER]
    for w in wl_filter:
        if w not in known:
            ap.error(f"unknown workload {w}; known: {', '.join(known)}")
    warm_specs = [Spec("jit-warmup", 16, contended=False)]
    if any(s.contended and (not wl_filter or s.name in wl_filter) for s in WORKLOADS):
        warm_specs.append(Spec("jit-warmup-contended", 16, contended=True, hold_s=0.001))
    replicated = any(p in P.THREE for p in peers)
    if not re.fullmatch(r"[1-9][0-9]*[mg]", args.plugin_heap):
        ap.error(f"--plugin-heap wants a size such as 2g or 1536m, not {args.plugin_heap}")
    P.PLUGIN_HEAP = args.plugin_heap
    reps = args.failover_reps if args.failover_reps is not None else (1 if args.quick else 3)
    if reps < 1:
        ap.error("--failover-reps must be at least 1")
    node_java_opts = P.esnode.extra_java_options()
    if node_java_opts and not args.quick:
        # the tests' C1-only JIT (scripts/node.py) would make every plugin figure slower than a
        # user's node: figures come from nodes run as users run them
        ap.error(f"${P.esnode.NODE_JAVA_OPTS_ENV} is set ({node_java_opts}): unset it for figures")
    three_settings = {}
    for kv in args.three_node_setting:
        if "=" not in kv:
            ap.error(f"--three-node-setting wants KEY=VALUE, not {kv}")
        k, v = kv.split("=", 1)
        three_settings[k] = v
    out = Path(args.out) if args.out else (ROOT / "build" / "bench-quick" if args.quick else HERE / "results")
    out.mkdir(parents=True, exist_ok=True)
    update_md = not (args.quick or args.no_results_md)
    cmd = "python3 bench/run.py" + "".join(f" {a}" for a in sys.argv[1:])

    def log(msg):
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)

    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_term)

    t_begin = time.monotonic()
    if not args.no_build:
        # Always from the working tree: a zip left from an older build would measure old code.
        log("building the plugin: mvn package -DskipTests (Rust release library, jar, zip)")
        subprocess.run(["mvn", "-B", "-q", "package", "-DskipTests"], cwd=ROOT, check=True,
                       env={**os.environ, "JAVA_HOME": P.esnode.java_home()})
    need = set(peers) | ({"zookeeper-prefix", "zookeeper"} if "zookeeper" in peers else set())
    if not args.no_install:
        P.ensure_installed(sorted(need), log)

    started: list = []
    results = {"command": cmd, "started_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
               "quick": args.quick, "duration_s": duration, "warmup_s": warmup,
               "node_java_opts": node_java_opts or None,
               "three_node_route": args.three_node_route if replicated else None,
               "jvm_warmup_s": jit_s * len(warm_specs), "client_procs": args.client_procs,
               "plugin_heap": args.plugin_heap,
               "machine": machine(), "other_load_at_start": other_load(),
               "versions": {}, "workloads": {}, "errors": []}
    workdir = Path(tempfile.mkdtemp(prefix="eslm-bench-"))
    try:
        instances = {}
        for name in sorted(need, key=lambda n: list(P.PEERS).index(n)):
            peer = P.PEERS[name]()
            if name in P.THREE:
                peer.route = args.three_node_route
            if name == "plugin-3":
                peer.settings = three_settings
            try:
                peer.start(workdir, log)
            except Exception as e:  # noqa: BLE001 - one broken peer does not stop the others
                results["errors"].append(f"{name}: start failed: {e}")
                log(f"!! {name} did not start: {e}")
                continue
            instances[name] = peer
            started.append(peer)
            if name == "plugin-3":
                results["plugin3_durability"] = peer.durability
            elif name in ("plugin", "plugin-memory"):
                results[f"{name.replace('-', '_')}_durability"] = peer.durability
            try:
                results["versions"][name] = peer.version()
            except Exception as e:  # noqa: BLE001
                results["versions"][name] = f"? ({e})"
        # A fresh JVM runs the first thousands of requests interpreted: warm the node's JIT with
        # unrecorded load first, else the first workload (uncontended-1, the plugin) pays for it
        # (measured: 1.5 ms vs 0.85 ms acquire+release p50 warm). Other peers are native code
        # (etcd, Redis) or warm up within their own 2 s warm-up (ZooKeeper's JVM is mostly idle).
        # The contended path (waiters, grant events, on three nodes the batches of every hand-off)
        # is code of its own: with contended workloads chosen it is warmed too. Three JVMs on two
        # cores keep compiling it for over a minute (bench/RESULTS.md, "Where a replicated
        # hand-off's time goes"), hence --jit-warmup.
        for name in ("plugin", "plugin-memory", "doc-recipe", "zookeeper", "plugin-3",
                     "plugin-3x3", "zookeeper-3"):
            for spec in warm_specs if name in instances and jit_s > 0 else []:
                log(f"JIT warm-up: {name}, {spec.name}, 16 clients, {jit_s:.0f} s (not recorded)")
                try:
                    run_workload(instances[name], spec, jit_s, 0.0, f"{spec.name}-{name}", log,
                                 procs=args.client_procs)
                except Exception as e:  # noqa: BLE001 - the workloads will show it
                    log(f"!! warm-up of {name} failed: {e}")
        seg = 0
        for spec in WORKLOADS:
            if wl_filter and spec.name not in wl_filter:
                continue
            for name in peers:
                if name not in instances or (name == "es-floor" and spec.name not in FLOOR_ONLY):
                    continue
                if spec.semaphore and not hasattr(instances[name], "semaphore_client"):
                    continue  # no semaphore of its own: "–" in the tables
                seg += 1
                log(f"{spec.name:16s} {name:16s} ...")
                try:
                    r = run_workload(instances[name], spec, duration, warmup, f"{spec.name}-{seg}", log,
                                     procs=args.client_procs)
                except Exception as e:  # noqa: BLE001
                    r = {"errors": [f"{type(e).__name__}: {e}"], "trace": traceback.format_exc()}
                try:
                    r.update(instances[name].after_workload())
                except Exception as e:  # noqa: BLE001 - the workload's own figures stand
                    log(f"!! {name}: no figures of its own after {spec.name}: {e}")
                results["workloads"].setdefault(spec.name, {})[name] = r
                log("    " + report.one_line(spec.name, r))
        if not wl_filter or MIXED.name in wl_filter:
            for name, use_prio in MIXED_PEERS:
                if name not in instances:
                    continue
                label = name if use_prio else f"{name} (no priority)"
                spec = Spec(MIXED.name, MIXED.clients, True, MIXED.hold_s, MIXED.background,
                            MIXED.fg_think_s, use_priority=use_prio)
                seg += 1
                log(f"{spec.name:16s} {label:16s} ...")
                try:
                    r = run_workload(instances[name], spec, duration, warmup, f"mixed-{seg}", log)
                except Exception as e:  # noqa: BLE001
                    r = {"errors": [f"{type(e).__name__}: {e}"], "trace": traceback.format_exc()}
                r["priorities"] = use_prio
                results["workloads"].setdefault(spec.name, {})[label] = r
                log("    " + report.one_line(spec.name, r))
        # last: they kill and restart nodes of the three-server peers (the owner moves)
        for wl, kind in FAILOVER.items():
            for name in failover.SIDES:
                if name not in instances or (wl_filter and wl not in wl_filter):
                    continue
                log(f"{wl:16s} {name}: {reps} × kill -9 of a node, lease {failover.LEASE_S:g} s ...")
                try:
                    r = failover.run(instances[name], kind, reps, log)
                except Exception as e:  # noqa: BLE001
                    r = {"errors": [f"{type(e).__name__}: {e}"], "trace": traceback.format_exc()}
                results["workloads"].setdefault(wl, {})[name] = r
                log("    " + report.one_line(wl, r))
        if "plugin" in instances:
            try:
                h = P.Http(P.ES.node.http_port)
                results["plugin_stats"] = h.call("GET", "/_locks/_stats")[1].get("total")
                h.close()
            except Exception as e:  # noqa: BLE001
                results["plugin_stats"] = f"? ({e})"
    except KeyboardInterrupt:
        log("interrupted: stopping the servers")
        results["errors"].append("interrupted")
    finally:
        for peer in started:
            try:
                peer.stop()
            except Exception:
                pass
        P.stop_shared()
        results["machine"]["loadavg_after"] = os.getloadavg()
        results["other_load_at_end"] = other_load()
    if not args.no_inprocess and "interrupted" not in results["errors"]:
        log("in-process benchmarks (servers stopped)")
        try:
            results["in_process"] = inprocess.run(args.quick, log)
            results["errors"] += results["in_process"].pop("errors")
        except KeyboardInterrupt:
            results["errors"].append("interrupted")
    results["wall_s"] = round(time.monotonic() - t_begin, 1)

    # a replicated run has files and a RESULTS.md section of its own: it never overwrites the
    # full run's
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d") + ("-replicated" if replicated else "")
    json_path = out / f"{stamp}.json"
    json_path.write_text(json.dumps(results, indent=1, sort_keys=False, default=str) + "\n")
    log(f"wrote {json_path}")
    png_path = out / f"{stamp}.png"
    try:
        report.plot(results, png_path)
        log(f"wrote {png_path}")
    except Exception as e:  # noqa: BLE001
        log(f"!! plot failed: {e}")
        results["errors"].append(f"plot: {e}")
        png_path = None
    if update_md:
        md = HERE / "RESULTS.md"
        if replicated:
            report.update_replicated_md(md, results, json_path, png_path)
        else:
            report.update_results_md(md, results, json_path, png_path)
        log(f"updated {md}")
    if replicated:
        print(report.replicated_table(results))
        print("\n".join(f"- {t}" for t in report.replicated_targets(results)))
    else:
        print(report.table(results))
    bad = [f"{w}/{p}: {e}" for w, d in results["workloads"].items() for p, r in d.items()
           for e in r.get("errors", [])]
    bad += results["errors"]
    bad += [f"{w}/{p}: {r['mutual_exclusion_violations']} mutual exclusion violations"
            for w, d in results["workloads"].items() for p, r in d.items()
            if r.get("mutual_exclusion_violations")]
    if bad:
        print("ERRORS:\n  " + "\n  ".join(bad))
        log(f"the servers' data and logs are kept in {workdir}")
        return 1
    shutil.rmtree(workdir, ignore_errors=True)  # ZooKeeper and etcd data: ~65 MB per etcd member
    log(f"done in {results['wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
