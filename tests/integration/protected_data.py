"""The protected-data load and its checker (issue 48 item 2, docs/RELIABILITY.md "Protected data"):
worker processes (tests/integration/data_worker.py) change documents under their locks through
the Python client while the test stops them past their leases (and, in the fault test, the
nemesis kills, freezes and cuts nodes); afterwards the checker reads the final documents and holds
them to what the workers were told.

The rules, per document kind:
- `counter`: the final count is at least the acknowledged increments (none lost) and at most those
  plus the increments whose outcome is unknown (none made up);
- `list`: every acknowledged append is in the final list exactly once, every refused one (stale,
  lost, failed) is not, an unknown one at most once;
- `flag` (deletes and re-creates): the document's final fence is at least the largest acknowledged
  token, and its final state is what a change with that token, acknowledged or unknown, left
  (a tombstone, or the value that change wrote)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

WORKER = Path(__file__).resolve().parent / "data_worker.py"
FENCE = "eslm_fence"


@dataclass(frozen=True)
class Spec:
    """Workers of one kind: how many, on which documents, by which recipe."""

    kind: str
    docs: tuple[str, ...]
    workers: int
    recipe: str = "fenced"


@dataclass
class Report:
    violations: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        lines = [f"data violations: {len(self.violations)}", f"data counts: {dict(sorted(self.counts.items()))}"]
        return "\n".join(lines + [f"  {v}" for v in self.violations[:20]])


class DataLoad:
    """The worker processes, each paused on its own request (SIGSTOP for the seconds it names,
    then SIGCONT and a line on its stdin), their records collected as they come."""

    def __init__(self, urls: list[str], index: str, specs: list[Spec], seed: int, seconds: float,
                 lease_s: float = 2.0, pause_p: float = 0.125, pause_s: tuple[float, float] = (3.0, 5.0),
                 answer_s: float = 10.0):
        self.urls, self.index, self.specs, self.seed, self.seconds = urls, index, specs, seed, seconds
        self.lease_s, self.pause_p, self.pause_s, self.answer_s = lease_s, pause_p, pause_s, answer_s
        self.records: list[dict] = []
        self.pauses = 0
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.processes: list[subprocess.Popen] = []
        self.readers: list[threading.Thread] = []

    def start(self) -> None:
        n = 0
        for spec in self.specs:
            for _ in range(spec.workers):
                self.processes.append(self._spawn(spec, f"{spec.kind}-{spec.recipe}-{n}"))
                n += 1
        for p in self.processes:
            t = threading.Thread(target=self._read, args=(p,), daemon=True)
            t.start()
            self.readers.append(t)

    def _spawn(self, spec: Spec, name: str) -> subprocess.Popen:
        argv = [sys.executable, str(WORKER), "--urls", ",".join(self.urls), "--index", self.index,
                "--docs", ",".join(spec.docs), "--kind", spec.kind, "--recipe", spec.recipe, "--name", name,
                "--seed", str(self.seed), "--seconds", str(self.seconds), "--lease-s", str(self.lease_s),
                "--answer-s", str(self.answer_s), "--pause-p", str(self.pause_p),
                "--pause-s", str(self.pause_s[0]), str(self.pause_s[1])]
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, bufsize=1)

    def _read(self, p: subprocess.Popen) -> None:
        for line in p.stdout:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if "pause" in record:
                self._pause(p, float(record["pause"]))
                continue
            with self.lock:
                self.records.append(record)

    def _pause(self, p: subprocess.Popen, seconds: float) -> None:
        """Stops the worker for `seconds` (its watchdog too, as a GC pause or a frozen VM would),
        then resumes it and lets it go on."""
        os.kill(p.pid, signal.SIGSTOP)
        with self.lock:
            self.pauses += 1

        def resume():
            try:
                os.kill(p.pid, signal.SIGCONT)
                p.stdin.write("go\n")
                p.stdin.flush()
            except (OSError, ValueError):
                pass  # it ended meanwhile
        threading.Timer(seconds, resume).start()

    def join(self) -> None:
        """Waits for every worker (each ends on its own after `seconds` and its last change)."""
        deadline = time.monotonic() + self.seconds + self.answer_s * 3 + self.pause_s[1] + 60
        for p in self.processes:
            try:
                p.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGCONT)
                p.kill()
                self.errors.append(f"worker {p.args[p.args.index('--name') + 1]} did not end in time")
            stderr = p.stderr.read()
            if p.returncode not in (0, None) and p.returncode != -signal.SIGKILL:
                self.errors.append(f"worker exited {p.returncode}: {stderr[-2000:]}")
        for t in self.readers:
            t.join(10)


def final_documents(url: str, index: str, docs: list[str]) -> dict[str, dict | None]:
    """Each document's source as its primary holds it now (a realtime GET), None when missing."""
    out = {}
    for doc in docs:
        r = requests.get(f"{url}/{index}/_doc/{doc}", timeout=30)
        assert r.status_code in (200, 404), r.text
        out[doc] = r.json()["_source"] if r.status_code == 200 else None
    return out


def check(records: list[dict], final: dict[str, dict | None]) -> Report:
    """The rules of the module docstring over the workers' records and the final documents."""
    report = Report()
    for r in records:
        key = f"{r['kind']} {r.get('op', '?')} {r['outcome']}"
        report.counts[key] = report.counts.get(key, 0) + 1
    by_doc: dict[str, list[dict]] = {}
    for r in records:
        by_doc.setdefault(r["doc"], []).append(r)
    for doc, rs in sorted(by_doc.items()):
        kind = rs[0]["kind"]
        {"counter": _counter, "list": _list, "flag": _flag}[kind](doc, rs, final.get(doc), report.violations)
    return report


def _live(source: dict | None) -> dict | None:
    """A document's fields without its fence; None for a missing document or a tombstone."""
    if source is None or source.get(FENCE, {}).get("deleted"):
        return None
    return {k: v for k, v in source.items() if k != FENCE}


def _counter(doc: str, rs: list[dict], final: dict | None, violations: list[str]) -> None:
    acked = sum(1 for r in rs if r["outcome"] == "ok")
    unknown = sum(1 for r in rs if r["outcome"] == "unknown")
    n = (_live(final) or {}).get("n", 0)
    if n < acked:
        violations.append(f"{doc}: {acked} increments acknowledged, the count is {n}: {acked - n} lost")
    if n > acked + unknown:
        violations.append(f"{doc}: the count {n} is more than the {acked} acknowledged and {unknown} unknown")


def _list(doc: str, rs: list[dict], final: dict | None, violations: list[str]) -> None:
    items = (_live(final) or {}).get("items", [])
    for r in rs:
        seen = items.count(r["value"])
        if r["outcome"] == "ok" and seen != 1:
            violations.append(f"{doc}: acknowledged append {r['value']} (token {r['token']}) is there {seen} times")
        elif r["outcome"] in ("stale", "lost", "fail") and seen:
            violations.append(f"{doc}: refused append {r['value']} ({r['outcome']}, token {r['token']}) is there")
        elif r["outcome"] == "unknown" and seen > 1:
            violations.append(f"{doc}: append {r['value']} of unknown outcome is there {seen} times")


def _flag(doc: str, rs: list[dict], final: dict | None, violations: list[str]) -> None:
    """Changes apply in the order of their tokens (one change per grant), so the final state is
    what the applied change with the largest token left; the applied ones are the acknowledged
    and some of the unknown. A fenced read raises the fence without a change, so the fence may
    be above every change's token."""
    changes = [r for r in rs if r.get("op") in ("delete", "create")]
    acked = max((r["token"] for r in changes if r["outcome"] == "ok"), default=0)
    fence = (final or {}).get(FENCE, {}).get("token", 0)
    if fence < acked:
        violations.append(f"{doc}: final fence {fence} below the acknowledged token {acked}")
        return
    could = [r for r in changes if r["outcome"] in ("ok", "unknown") and acked <= r["token"] <= fence]
    left = [None if r["op"] == "delete" else {"by": r["value"]} for r in could] or [None]
    state = _live(final)
    if state not in left:
        violations.append(f"{doc}: final state {state} (fence {fence}) is what no change from token {acked} "
                          f"on left: {left}")
