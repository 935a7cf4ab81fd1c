"""No false alarms (issue 37, item 5): a loaded cluster is not a silent one. Three nodes with the
plugin (bench/peers.py `Plugin3`, default settings), 16 clients contending for one key
(bench/run.py's `contended-16`, each hold ~1 ms) for `--duration` seconds, no fault injected.
Meanwhile `.locks` is read from the master every second: its primary term (a failover, whether
Elasticsearch's or the plugin's silent-owner failover, raises it), its in-sync copies (a failed
copy leaves them) and where its copies are. Afterwards every node's log is searched for the
plugin's silent-owner failover and for failed copies.

    python3 bench/quiet_load.py --duration 600

Prints one JSON object: grants, hand-offs and latency of the load (bench/workloads.py figures),
the primary terms seen, failovers, copies failed, and the log lines found. Exits 1 when anything
failed over or a copy failed."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers  # noqa: E402
import workloads  # noqa: E402

CONTENDED_16 = workloads.Spec("contended-16", 16, contended=True, hold_s=0.001)
# What the plugin and Elasticsearch log when a copy is given up (scripts/node.py keeps each node's
# log under its home): the master's silent-owner failover (org.eslm.cluster.SilentOwners), a
# replica failed by its primary, and Elasticsearch's own shard failure.
LOG_MARKS = ("heard nothing from its owner", "shard-failed", "marking and sending shard failed", "failing shard")


class LocksWatch:
    """Reads `.locks` from the master every `every_s` until stopped: the primary terms and
    in-sync allocation ids seen, and every read that found a copy not started."""

    def __init__(self, node, every_s: float = 1.0):
        self.node, self.every_s = node, every_s
        self.terms: list[int] = []
        self.in_sync: list[tuple] = []
        self.not_started: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.is_set():
            state = self.node.get("/_cluster/state/metadata,routing_table/.locks", timeout=10)
            meta = state["metadata"]["indices"][".locks"]
            self.terms.append(meta["primary_terms"]["0"])
            self.in_sync.append(tuple(sorted(meta["in_sync_allocations"]["0"])))
            for copy in state["routing_table"]["indices"][".locks"]["shards"]["0"]:
                if copy["state"] != "STARTED":
                    self.not_started.append(f"{copy['primary']}:{copy['state']}")
            self.stop.wait(self.every_s)


def log_lines(cluster) -> list[str]:
    """The lines of every node's log that mark a failover or a failed copy."""
    found = []
    for node in cluster.nodes:
        for log in (node.home / "logs").glob("*.log"):
            for line in log.read_text(errors="replace").splitlines():
                if any(mark in line for mark in LOG_MARKS):
                    found.append(f"{node.name}: {line[:300]}")
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=600.0, help="seconds of load (default 600)")
    ap.add_argument("--warmup", type=float, default=5.0)
    args = ap.parse_args()
    peer = peers.Plugin3()
    with tempfile.TemporaryDirectory() as workdir:
        peer.start(Path(workdir), log=lambda m: print(m, file=sys.stderr))
        try:
            watch = LocksWatch(peer.cluster.nodes[0])
            watch.thread.start()
            figures = workloads.run(peer, CONTENDED_16, args.duration, args.warmup, "quiet-load",
                                    log=lambda m: print(m, file=sys.stderr))
            watch.stop.set()
            watch.thread.join(30)
            lines = log_lines(peer.cluster)
            version = peer.version()
        finally:
            peer.stop()
    failovers = len({t for t in watch.terms}) - 1
    copies_failed = sum(1 for a, b in zip(watch.in_sync, watch.in_sync[1:]) if not set(a) <= set(b))
    report = {
        "duration_s": args.duration,
        "peer": version,
        "load": {k: figures.get(k) for k in ("grants", "grants_per_s", "handoffs", "handoff_p50_ms",
                                             "handoff_p99_ms", "acquire_p50_ms", "acquire_p99_ms",
                                             "mutual_exclusion_violations", "errors")
                 if k in figures},
        "reads_of_locks": len(watch.terms),
        "primary_terms_seen": sorted(set(watch.terms)),
        "failovers": failovers,
        "copies_failed": copies_failed,
        "reads_with_a_copy_not_started": len(watch.not_started),
        "log_lines": lines,
    }
    print(json.dumps(report, indent=2))
    return 0 if failovers == 0 and copies_failed == 0 and not lines else 1


if __name__ == "__main__":
    sys.exit(main())
