"""The in-process figures of two revisions side by side, in one run (bench/inprocess.py on each):
criterion for the Rust lock core and JMH for one lock operation through the JNI bridge. For a
change that must not cost speed (a restructuring): the base revision is checked out under
build/ab-base, both trees are built, then measured back to back on the same machine.

    python3 bench/ab_inprocess.py --base main          # base = a revision; head = this tree
    python3 bench/ab_inprocess.py --base main --rounds 3

Prints a Markdown table (base, head, change) for bench/RESULTS.md and writes the raw figures to
build/ab-inprocess.json. One round takes about 5 minutes after the builds; run it on an otherwise
idle machine. On a noisy machine (a VM: one round's JMH errors can be as large as the figures),
`--rounds N` measures base and head N times, alternating (base, head, head, base, ...), and shows
each figure's median over its rounds."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE_DIR = ROOT / "build" / "ab-base"
MEASURE = ("import json, sys; sys.path.insert(0, 'bench'); import inprocess; "
           "print('AB-JSON ' + json.dumps(inprocess.run(False, log=lambda *_: None)))")


def checkout(rev: str) -> Path:
    """A clone of this repository at `rev` under build/ab-base, fresh every run."""
    subprocess.run(["rm", "-rf", str(BASE_DIR)], check=True)
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(BASE_DIR)], check=True)
    subprocess.run(["git", "-C", str(BASE_DIR), "checkout", "-q", rev], check=True)
    return BASE_DIR


def build(tree: Path) -> None:
    """What bench/inprocess.py needs: the release library, the plugin jar, the bench binaries."""
    env = {**os.environ, "JAVA_HOME": os.environ.get("JAVA_HOME") or
           subprocess.check_output([str(ROOT / "scripts" / "find-jdk")], text=True).strip()}
    for cmd in (["mvn", "-B", "-q", "package", "-DskipTests"],
                ["cargo", "bench", "--locked", "-p", "lock-core", "--bench", "lock_core", "--no-run"]):
        subprocess.run(cmd, cwd=tree, check=True, env=env, stdout=subprocess.DEVNULL)


def measure(tree: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", MEASURE], cwd=tree, check=True, text=True,
                         capture_output=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("AB-JSON "))
    figures = json.loads(line[len("AB-JSON "):])
    if figures["errors"]:
        raise RuntimeError(f"{tree}: {figures['errors']}")
    return figures


def median_of(rounds: list[dict]) -> dict:
    """Each figure's median over the rounds (the JMH error shown is the median round's)."""
    def pick(kind: str, key: str, field: str) -> dict:
        runs = sorted((r[kind][key] for r in rounds if key in r[kind]), key=lambda f: f[field])
        return runs[len(runs) // 2]
    return {kind: {key: pick(kind, key, field) for key in rounds[0][kind]}
            for kind, field in (("criterion", "ns_per_iter"), ("jmh", "ns_per_op"))}


def rows(base: dict, head: dict) -> list[str]:
    out = ["| figure | base | head | change |", "|---|---:|---:|---:|"]
    for key, b in base["criterion"].items():
        h = head["criterion"].get(key)
        if h:
            bn, hn = (f["ns_per_iter"] / f["elements_per_iter"] for f in (b, h))
            out.append(f"| criterion `{key}` | {bn:,.0f} ns | {hn:,.0f} ns | {100 * (hn - bn) / bn:+.0f} % |")
    for key, b in base["jmh"].items():
        h = head["jmh"].get(key)
        if h:
            bn, hn = b["ns_per_op"], h["ns_per_op"]
            err = lambda f: f" ± {f['error_ns']:,.0f}" if f.get("error_ns") is not None else ""  # noqa: E731
            out.append(f"| JMH `{key}` | {bn:,.0f}{err(b)} ns | {hn:,.0f}{err(h)} ns | "
                       f"{100 * (hn - bn) / bn:+.0f} % |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the revision to compare this tree with")
    ap.add_argument("--rounds", type=int, default=1, help="measurements of each, alternating; medians shown")
    args = ap.parse_args()
    started = time.monotonic()
    base_tree = checkout(args.base)
    for tree in (base_tree, ROOT):
        build(tree)
    bases, heads = [], []
    for i in range(args.rounds):
        order = [(bases, base_tree), (heads, ROOT)]
        for into, tree in order if i % 2 == 0 else reversed(order):
            into.append(measure(tree))
    base, head = median_of(bases), median_of(heads)
    head_rev = subprocess.check_output(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                       text=True).strip()
    (ROOT / "build" / "ab-inprocess.json").write_text(json.dumps(
        {"base": args.base, "head": head_rev, "rounds": args.rounds, "base_rounds": bases, "head_rounds": heads},
        indent=1))
    print(f"base {args.base}, head {head_rev}, {args.rounds} round(s), medians, {time.monotonic() - started:.0f} s")
    print("\n".join(rows(base, head)))


if __name__ == "__main__":
    main()
