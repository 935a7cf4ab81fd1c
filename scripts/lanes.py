#!/usr/bin/env python3
"""Runs commands at once, each in a lane of its own, and prints each lane's output after all have
ended, in the order given, with its exit status and time; fails if any lane failed.

`make integration-test` runs its test runs in lanes (CONTRIBUTING.md "Tests"): each alone leaves a core idle
while it waits on its nodes, so side by side they end sooner than one after another, though on
the project's two cores they still slow each other.

    python3 scripts/lanes.py 'name=command ...' 'other=command ...'

A lane is one shell command (`bash -c`); its output goes to build/lanes/<name>.log, which stays
there for a post-mortem. The lane named by --follow is also printed as it runs, and the end of
every lane is announced when it happens, so a long run is never silent. A lane that runs past
--timeout seconds is killed with its process group (and counts as failed), so nothing outlives
the run."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

LOGS = Path(__file__).resolve().parent.parent / "build" / "lanes"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timeout", type=float, default=3600, help="seconds a lane may run (default 3600)")
    parser.add_argument("--follow", metavar="NAME", help="print this lane's output as it runs")
    parser.add_argument("lanes", nargs="+", metavar="name=command")
    args = parser.parse_args()
    LOGS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    running = []
    tees: dict[str, threading.Thread] = {}
    for lane in args.lanes:
        name, _, command = lane.partition("=")
        if not name or not command:
            parser.error(f"a lane is name=command, not {lane!r}")
        log = LOGS / f"{name}.log"
        print(f"=== lane {name}: {command} (output: {log})", flush=True)
        followed = name == args.follow
        # ESLM_LANE: scripts/node.py gives each lane node folders of its own
        process = subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE if followed else log.open("w"),
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   env={**os.environ, "ESLM_LANE": name})
        if followed:
            tees[name] = threading.Thread(target=_tee, args=(process.stdout, log), daemon=True)
            tees[name].start()
        running.append((name, log, process))
    log_of = {name: log for name, log, _ in running}
    ended: dict[str, tuple[object, float]] = {}
    while len(ended) < len(running):
        for name, _, process in running:
            if name not in ended and process.poll() is not None:
                ended[name] = (process.returncode, time.monotonic() - started)
                if name in tees:
                    tees[name].join(timeout=10)  # its last lines first
                print(f"=== lane {name} ended: exit {process.returncode} after {ended[name][1]:.0f}s", flush=True)
                if process.returncode != 0:
                    # said at once as well as at the end: CI may keep only a window of a long output
                    print(_failure_summary(log_of[name], tail=15), flush=True)
        if time.monotonic() - started > args.timeout:
            for name, _, process in running:
                if name not in ended:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
                    ended[name] = (f"killed after {args.timeout:.0f}s", time.monotonic() - started)
        time.sleep(0.5)
    failed = []
    for name, log, _ in running:
        code, took = ended[name]
        print(f"\n=== lane {name}: exit {code}, ended {took:.0f}s after the lanes started\n", flush=True)
        if name != args.follow:
            sys.stdout.write(log.read_text(errors="replace"))
            sys.stdout.flush()
        if code != 0:
            failed.append(name)
    for name, log, _ in running:
        if name in failed:
            print(f"\n=== lane {name} failed; its summary:\n{_failure_summary(log)}", flush=True)
    print(f"\n=== lanes: {len(running) - len(failed)} of {len(running)} passed"
          + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed else 0


def _failure_summary(log: Path, tail: int = 40) -> str:
    """The lines that say what failed, repeated last: CI may keep only the head and the tail of a
    long output, and a failed lane's own lines sit in its middle. pytest's short summary (its
    FAILED and ERROR lines) when there is one, else the log's last lines."""
    lines = log.read_text(errors="replace").splitlines()
    marks = [i for i, line in enumerate(lines) if "short test summary info" in line]
    if marks:
        return "\n".join(line[:300] for line in lines[marks[-1]:][: tail * 4])
    return "\n".join(line[:300] for line in lines[-tail:])


def _tee(stream, log: Path) -> None:
    """Copies a followed lane's output to our stdout and to its log, line by line."""
    with log.open("wb") as out:
        for line in iter(stream.readline, b""):
            out.write(line)
            out.flush()
            sys.stdout.buffer.write(line)
            sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
