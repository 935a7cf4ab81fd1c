"""Smoke test of the soak run (issue 13): `tests/soak.py` for 45 s, so the harness cannot rot
and every traffic kind it drives (locks, conflicts, timed-out waits, sessions, multi-locks,
tree locks, clients that hang up) is checked on every CI run: no 5xx, never two exclusive
holders, rising tokens, and the node drained afterwards (no lock, waiter, session or pending
request left). The ten-minute run and its memory figures are in docs/RELIABILITY.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_short_soak_drains_and_sees_no_violation():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "soak.py"), "--seconds", "45", "--no-flat", "--seed", "7"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    report = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert report["violations"] == []
    assert report["drained"] == {"held": 0, "waiting": 0, "sessions": 0, "pending_requests": 0}
    counts = report["counts"]
    for kind in ("acquire exclusive 200", "release 200", "wait on busy key 409", "session create 200",
                 "session end 200", "multi acquire 200", "acquire tree 200", "hung up"):
        assert counts.get(kind, 0) > 0, f"the soak never did [{kind}]: {counts}"
    assert report["samples"] >= 5 and report["last_sample"][2] > 0, "memory was sampled"
