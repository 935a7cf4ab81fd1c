"""Tables, plot and the RESULTS.md update of bench/run.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import inprocess

HERE = Path(__file__).resolve().parent
START = "<!-- bench/run.py: peers:start (generated, do not edit by hand) -->"
END = "<!-- bench/run.py: peers:end -->"
REPL_START = "<!-- bench/run.py --replicated: start (generated, do not edit by hand) -->"
REPL_END = "<!-- bench/run.py --replicated: end -->"
LOCK_CORE = "## lock-core (in process)"

PEER_ORDER = ["plugin", "doc-recipe", "zookeeper", "etcd", "redis", "es-floor"]
LABEL = {"plugin": "plugin", "plugin-memory": "plugin, memory", "doc-recipe": "doc recipe",
         "zookeeper": "ZooKeeper", "etcd": "etcd", "redis": "Redis",
         "es-floor": "ES floor (not a lock)", "plugin-3": "plugin, 3 nodes",
         "plugin-3x3": "plugin, 3 nodes, 3 partitions", "zookeeper-3": "ZooKeeper, 3 servers",
         "etcd-3": "etcd, 3 members"}
# the three-node comparison (bench/run.py --replicated): replicated peers, then single-server ones
REPLICATED_ORDER = ["plugin-3", "plugin-3x3", "zookeeper-3", "etcd-3", "plugin", "plugin-memory", "zookeeper",
                    "etcd"]
# plugin-memory (the single node with locks.durability: memory) only when a run has it
TABLE_ORDER = ["plugin", "plugin-memory", *PEER_ORDER[1:]]
PLOT_ORDER = TABLE_ORDER + ["plugin-3", "plugin-3x3", "zookeeper-3", "etcd-3"]


def f(x, nd=1):
    if x is None:
        return "–"
    if isinstance(x, float):
        if abs(x) >= 100:
            return f"{x:,.0f}"
        return f"{x:.{nd}f}"
    return str(x)


def one_line(workload: str, r: dict) -> str:
    if "samples" in r:  # election failover (bench/failover.py)
        s = (f"failover p50 {f(r.get('failover_p50_ms'), 0)} max {f(r.get('failover_max_ms'), 0)} ms"
             f" (lease {f(r.get('lease_s'), 0)} s, left at the kill p50 "
             f"{f(r.get('lease_left_p50_ms'), 0)} ms)  other leadership kept {r.get('survived')}"
             f"  reads unavailable p50 {f(r.get('reads_unavailable_p50_ms'), 0)} max "
             f"{f(r.get('reads_unavailable_max_ms'), 0)} ms")
        return s + ("  ERRORS: " + "; ".join(r["errors"]) if r.get("errors") else "")
    if r.get("errors") and not r.get("grants"):
        return "ERROR " + "; ".join(r["errors"])
    s = (f"{f(r.get('grants_per_s'))}/s  pair p50 {f(r.get('pair_p50_ms'), 2)} ms "
         f"p99 {f(r.get('pair_p99_ms'), 2)} ms  req/grant {f(r.get('requests_per_grant'), 2)}  "
         f"cpu client {f(r.get('client_cpu_pct'))}% server {f(r.get('server_cpu_pct'))}%")
    if "handoff_p50_ms" in r:
        s += (f"  handoff p50 {f(r.get('handoff_p50_ms'), 2)} p99 {f(r.get('handoff_p99_ms'), 2)} ms"
              f"  jain {f(r.get('jain'), 3)}  violations {r.get('mutual_exclusion_violations')}")
    if "fg_wait_p50_ms" in r:
        s += (f"  fg wait p50 {f(r.get('fg_wait_p50_ms'), 2)} p99 {f(r.get('fg_wait_p99_ms'), 2)} ms"
              f"  bg wait p50 {f(r.get('bg_wait_p50_ms'), 2)} ms")
    if r.get("errors"):
        s += "  ERRORS: " + "; ".join(r["errors"])
    return s


# issue 15: one permit of a limit-4 semaphore, 1 client, in the same run as the lock pair
SEMAPHORE_ROWS = [
    ("semaphore (1 permit of 4), 1 client: acquire+release p50 (ms)", "semaphore-1",
     "pair_p50_ms", 2),
    ("semaphore, 1 client: p99 (ms)", "semaphore-1", "pair_p99_ms", 2),
]
# issue 15: election failover on three servers (bench/failover.py)
FAILOVER_ROWS = [
    ("election, leader's node killed: new leader observed after, p50 (ms)", "election-failover",
     "failover_p50_ms", 0),
    ("election, leader's node killed: max (ms)", "election-failover", "failover_max_ms", 0),
    ("election, leader's node killed: its lease left at the kill, p50 (ms)", "election-failover",
     "lease_left_p50_ms", 0),
    ("election, leader's node killed: observed − lease left (overhead), p50 (ms)",
     "election-failover", "overhead_p50_ms", 1),
    ("election, owner (ensemble: leader) killed: a leader elsewhere kept its term",
     "election-owner-loss", "survived", 0),
    ("election, owner (ensemble: leader) killed: reads unavailable p50 (ms)",
     "election-owner-loss", "reads_unavailable_p50_ms", 0),
    ("election, owner (ensemble: leader) killed: reads unavailable max (ms)",
     "election-owner-loss", "reads_unavailable_max_ms", 0),
    ("election, owner (ensemble: leader) killed with the leader's node: new leader observed "
     "p50 (ms)", "election-owner-loss", "failover_p50_ms", 0),
]


def issue15_notes(results: dict) -> list[str]:
    """A line of explanation for the semaphore and election rows, when the run has them."""
    w = results["workloads"]
    lines = []
    if "semaphore-1" in w:
        lines.append("Semaphore rows: one client acquires 1 permit of a limit-4 semaphore and "
                     "releases it, back to back, right after the lock pair of uncontended-1 "
                     "(plugin: `POST /_semaphores/{name}/_acquire|_release`; ZooKeeper: kazoo's "
                     "`Semaphore` recipe, `max_leases=4`); etcd and Redis have no semaphore: –.")
    runs = [r for wl in ("election-failover", "election-owner-loss")
            for r in w.get(wl, {}).values() if "lease_s" in r]
    if runs:
        r = runs[0]
        lines.append(
            f"Election rows (three-server peers; bench/README.md, \"Workloads\"): leaders with a "
            f"lease of {r['lease_s']:g} s (ZooKeeper: session timeout; etcd: lease TTL), renewed "
            f"every {r['renew_every_s']:g} s through their server, a second candidate waiting "
            "through another one, an observer on each surviving server (plugin: `_observe` long "
            "poll; ZooKeeper: kazoo `Election` + a children watch; etcd: `/v3/election/observe`); "
            f"{r['repetitions']} kill -9 per workload, the server started again between them. "
            "\"leader's node killed\": a server neither owner nor master/leader, the leader dying "
            "with it: failover ≈ lease left + overhead. \"owner killed\": the plugin's partition "
            "owner, the ensemble's leader; a leader on another server keeps renewing and must "
            "keep its term; reads = the longest time a loop reading the election on a surviving "
            "server went without an answer naming that leader.")
    return lines


def figure_rows(results: dict, peers: list[str], rows) -> list[str]:
    """A Markdown table, one column per peer: a header, then one line per (label, workload,
    key, digits) row; a peer whose workload failed shows "error"."""
    out = ["| figure | " + " | ".join(LABEL[p] for p in peers) + " |",
           "|---|" + "---:|" * len(peers)]
    for label, w, k, nd in rows:
        vals = []
        for p in peers:
            v = _get(results, w, p, k)
            if v is None and _get(results, w, p, "errors"):
                vals.append("error")
            elif isinstance(v, float) and nd == 0:
                vals.append(f"{v:,.0f}")
            else:
                vals.append(f(v, nd))
        out.append(f"| {label} | " + " | ".join(vals) + " |")
    return out


def _get(results, w, p, k):
    return results["workloads"].get(w, {}).get(p, {}).get(k)


def table(results: dict) -> str:
    peers = [p for p in TABLE_ORDER if any(p in d for d in results["workloads"].values())]
    rows = [
        ("uncontended, 1 client: acquire+release p50 (ms)", "uncontended-1", "pair_p50_ms", 2),
        ("uncontended, 1 client: p99 (ms)", "uncontended-1", "pair_p99_ms", 2),
        ("uncontended, 1 client: pairs/s", "uncontended-1", "grants_per_s", 0),
        *SEMAPHORE_ROWS,
        ("uncontended, 16 clients: pairs/s", "uncontended-16", "grants_per_s", 0),
        ("uncontended, 16 clients: p99 (ms)", "uncontended-16", "pair_p99_ms", 1),
        ("uncontended, 64 clients: pairs/s", "uncontended-64", "grants_per_s", 0),
        ("uncontended, 64 clients: p99 (ms)", "uncontended-64", "pair_p99_ms", 1),
        ("contended, 16 clients: critical sections/s", "contended-16", "grants_per_s", 0),
        ("contended, 16: hand-off p50 (ms)", "contended-16", "handoff_p50_ms", 2),
        ("contended, 16: hand-off p99 (ms)", "contended-16", "handoff_p99_ms", 2),
        ("contended, 16: Jain fairness", "contended-16", "jain", 3),
        ("contended, 16: server requests per grant", "contended-16", "requests_per_grant", 1),
        ("contended, 64 clients: critical sections/s", "contended-64", "grants_per_s", 0),
        ("contended, 64: hand-off p50 (ms)", "contended-64", "handoff_p50_ms", 2),
        ("contended, 64: hand-off p99 (ms)", "contended-64", "handoff_p99_ms", 2),
        ("contended, 64: Jain fairness", "contended-64", "jain", 3),
        ("contended, 64: server requests per grant", "contended-64", "requests_per_grant", 1),
        ("contended, 64: server CPU ms per grant", "contended-64", "server_cpu_ms_per_grant", 2),
        ("uncontended, 64: server CPU ms per pair", "uncontended-64", "server_cpu_ms_per_grant", 2),
        ("uncontended, 64: client CPU % (of 1 core)", "uncontended-64", "client_cpu_pct", 0),
    ]
    out = figure_rows(results, peers, rows)
    mixed = results["workloads"].get("mixed-priority", {})
    if mixed:
        out += ["", "Mixed priority (one key; 4 background clients back to back, 2 foreground "
                "clients every 10–30 ms; all hold ~1 ms):", "",
                "| peer | foreground wait p50 (ms) | p99 | max | background wait p50 (ms) | "
                "foreground grants | background grants |", "|---|---:|---:|---:|---:|---:|---:|"]
        for p, r in mixed.items():
            out.append(f"| {p} | {f(r.get('fg_wait_p50_ms'), 2)} | {f(r.get('fg_wait_p99_ms'), 2)} | "
                       f"{f(r.get('fg_wait_max_ms'), 2)} | {f(r.get('bg_wait_p50_ms'), 2)} | "
                       f"{r.get('fg_grants', '–')} | {r.get('bg_grants', '–')} |")
    return "\n".join(out)


def ratios(results: dict) -> list[str]:
    """The issue's targets, as plugin / peer ratios."""
    g = lambda w, p, k: _get(results, w, p, k)  # noqa: E731
    lines = []
    for w in ("contended-16", "contended-64"):
        for p in PEER_ORDER[1:5]:
            a, b = g(w, "plugin", "grants_per_s"), g(w, p, "grants_per_s")
            ha, hb = g(w, "plugin", "handoff_p50_ms"), g(w, p, "handoff_p50_ms")
            if a and b:
                lines.append(f"{w}: critical sections/s plugin/{LABEL[p]} = {a / b:.2f}×"
                             + (f"; hand-off p50 {ha:.2f} vs {hb:.2f} ms ({hb / ha:.2f}× "
                                f"{'faster' if hb >= ha else 'slower'})" if ha and hb else ""))
    for w in ("uncontended-16", "uncontended-64"):
        a, b = g(w, "plugin", "grants_per_s"), g(w, "doc-recipe", "grants_per_s")
        if a and b:
            lines.append(f"{w}: throughput plugin/doc recipe = {a / b:.2f}× (target ≥ 10×)")
    a = g("uncontended-1", "plugin", "pair_p50_ms")
    for p in ("zookeeper", "etcd", "redis", "doc-recipe"):
        b = g("uncontended-1", p, "pair_p50_ms")
        if a and b:
            lines.append(f"uncontended-1: p50 plugin {a:.2f} ms vs {LABEL[p]} {b:.2f} ms "
                         f"(plugin/{LABEL[p]} = {a / b:.2f})")
    return lines


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    peers = [p for p in PLOT_ORDER if any(p in d for d in results["workloads"].values())]
    colors = {"plugin": "#d62728", "plugin-memory": "#e377c2", "doc-recipe": "#ff9896",
              "zookeeper": "#1f77b4", "etcd": "#2ca02c", "redis": "#9467bd", "es-floor": "#bbbbbb",
              "plugin-3": "#7f0000", "plugin-3x3": "#b30000", "zookeeper-3": "#0b3d6b", "etcd-3": "#145214"}
    fig, axes = plt.subplots(2, 3, figsize=(16, 9))
    title = "Lock services on one machine (%s cores, client and servers share them) — %s%s" % (
        results["machine"].get("cores"), results["started_utc"][:16].replace("T", " "),
        " — QUICK smoke run" if results.get("quick") else "")
    fig.suptitle(title, fontsize=13)

    def bars(ax, groups, key, ylabel, log=False, higher_better=True):
        import numpy as np

        x = np.arange(len(groups))
        w = 0.8 / max(1, len(peers))
        for j, p in enumerate(peers):
            vals = [(_get(results, g, p, key) or 0) for g in groups]
            b = ax.bar(x + j * w - 0.4 + w / 2, vals, w, label=LABEL[p], color=colors[p])
            for rect, v in zip(b, vals):
                if v:
                    ax.annotate(f"{v:,.0f}" if v >= 100 else f"{v:.2g}" if v < 1 else f"{v:.1f}",
                                (rect.get_x() + rect.get_width() / 2, v), ha="center",
                                va="bottom", fontsize=7, rotation=90)
        ax.set_xticks(x, [g.replace("contended-", "contended\n").replace("uncontended\n", "uncontended\n") for g in groups])
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
        ax.set_title(ylabel + ("  (higher is better)" if higher_better else "  (lower is better)"),
                     fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi * (3 if log else 1.15))

    bars(axes[0][0], ["uncontended-1"], "pair_p50_ms", "acquire+release p50, 1 client (ms)",
         higher_better=False)
    bars(axes[0][1], ["uncontended-1", "uncontended-16", "uncontended-64"], "grants_per_s",
         "uncontended pairs/s", log=True)
    bars(axes[0][2], ["contended-16", "contended-64"], "grants_per_s",
         "contended critical sections/s (hold 1 ms)")
    bars(axes[1][0], ["contended-16", "contended-64"], "handoff_p50_ms",
         "hand-off p50: release → next grant (ms)", log=True, higher_better=False)
    bars(axes[1][1], ["contended-16", "contended-64"], "requests_per_grant",
         "server requests per granted lock", log=True, higher_better=False)
    axes[0][0].legend(fontsize=8)

    ax = axes[1][2]
    mixed = results["workloads"].get("mixed-priority", {})
    names = list(mixed)
    import numpy as np

    x = np.arange(len(names))
    fg50 = [mixed[n].get("fg_wait_p50_ms") or 0 for n in names]
    fg99 = [mixed[n].get("fg_wait_p99_ms") or 0 for n in names]
    bg50 = [mixed[n].get("bg_wait_p50_ms") or 0 for n in names]
    ax.bar(x - 0.27, fg50, 0.27, label="foreground p50", color="#d62728")
    ax.bar(x, fg99, 0.27, label="foreground p99", color="#ff9896")
    ax.bar(x + 0.27, bg50, 0.27, label="background p50", color="#7f7f7f")
    ax.set_xticks(x, [n.replace(" (", "\n(") for n in names], fontsize=8)
    ax.set_ylabel("wait for the lock (ms)")
    ax.set_title("mixed priority: wait for the lock (lower is better)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def section(results: dict, json_path: Path, png_path: Path | None) -> str:
    m = results["machine"]
    rel = lambda p: p.relative_to(HERE).as_posix() if p and HERE in p.parents else str(p)  # noqa: E731
    lines = [START, "", "## Peers side by side (bench/run.py)", "",
             f"Run {results['started_utc']} with `{results['command']}` "
             f"({results['duration_s']} s measured + {results['warmup_s']} s warm-up per workload; "
             f"whole run {results.get('wall_s')} s, after {results.get('jvm_warmup_s', 0):.0f} s of unrecorded "
             f"JIT warm-up per JVM peer). Raw figures: [`{rel(json_path)}`]({rel(json_path)}).",
             ""]
    if png_path:
        lines += [f"![benchmark plot]({rel(png_path)})", ""]
    lines += [f"Machine: {m.get('cpu')}, {m.get('cores')} cores, {m.get('memory')}, {m.get('os')}, "
              f"kernel {m.get('kernel')}, Python {m.get('python')}. Load average before/after: "
              f"{', '.join(f'{x:.2f}' for x in m.get('loadavg_before', []))} / "
              f"{', '.join(f'{x:.2f}' for x in m.get('loadavg_after', []))}.", ""]
    other = results.get("other_load_at_start", []) + results.get("other_load_at_end", [])
    if other:
        lines += ["Other processes were busy on the machine during this run (pid %CPU command, "
                  "at start and end): " + "; ".join(f"`{o}`" for o in other) + ". The numbers "
                  "are therefore noisy; ratios measured in the same run are the robust part.", ""]
    lines += ["Versions:", ""]
    lines += [f"- {k}: {v}" for k, v in results["versions"].items()]
    lines += ["", table(results), ""]
    lines += [x for n in issue15_notes(results) for x in (n, "")]
    lines += ["Key ratios (plugin against each peer):", ""]
    lines += [f"- {r}" for r in ratios(results)]
    if results.get("in_process"):
        lines += ["", "In process, same run, after the servers stopped (no network, no Elasticsearch): "
                  "what the lock itself costs, for reading the figures above against it.", "",
                  inprocess.table(results["in_process"])]
    errs = [f"{w}/{p}: {e}" for w, d in results["workloads"].items() for p, r in d.items()
            for e in r.get("errors", [])] + results.get("errors", [])
    if errs:
        lines += ["", "Errors in this run:", ""] + [f"- {e}" for e in errs]
    lines += ["", END]
    return "\n".join(lines)


HEADER = """# Benchmark results

Figures of issue 6, measured side by side on one machine. The section between the
`bench/run.py` markers is rewritten by every full run of `python3 bench/run.py`; the
`{lock_core}` section is written by hand from `cargo bench -p lock-core` and is kept as it is.
""".format(lock_core=LOCK_CORE)


def update_results_md(md: Path, results: dict, json_path: Path, png_path: Path | None) -> None:
    """Replaces the generated section between the markers (or inserts it after the title),
    keeping every other section, in particular '## lock-core (in process)', as it is."""
    new = section(results, json_path, png_path)
    text = md.read_text() if md.exists() else HEADER
    if START in text and END in text:
        text = text[:text.index(START)] + new + text[text.index(END) + len(END):]
    else:
        # after the first heading's paragraph, before everything else
        m = re.search(r"\n## ", text)
        if m:
            text = text[:m.start()] + "\n\n" + new + "\n" + text[m.start():]
        else:
            text = text.rstrip("\n") + "\n\n" + new + "\n"
    md.write_text(text)


# --- the three-node comparison (issue 12) ------------------------------------------------------

REPLICATED_ROWS = [
    ("uncontended, 1 client: acquire+release p50 (ms)", "uncontended-1", "pair_p50_ms", 2),
    ("uncontended, 1 client: p99 (ms)", "uncontended-1", "pair_p99_ms", 2),
    ("uncontended, 1 client: pairs/s", "uncontended-1", "grants_per_s", 0),
    *SEMAPHORE_ROWS,
    ("contended, 16 clients: critical sections/s", "contended-16", "grants_per_s", 0),
    ("contended, 16: hand-off p50 (ms)", "contended-16", "handoff_p50_ms", 2),
    ("contended, 16: hand-off p99 (ms)", "contended-16", "handoff_p99_ms", 2),
    ("contended, 16: a batch's round trip to every copy, p50 (ms; the owner's diagnostics)",
     "contended-16", "replication_round_trip_p50_ms", 3),
    ("contended, 16: Jain fairness", "contended-16", "jain", 3),
    ("contended, 16: server requests per grant", "contended-16", "requests_per_grant", 1),
    ("contended, 16: server CPU ms per grant (all servers)", "contended-16",
     "server_cpu_ms_per_grant", 2),
    *FAILOVER_ROWS,
]


def replicated_table(results: dict) -> str:
    """Three-server peers beside their single-server peers, measured in the same run."""
    peers = [p for p in REPLICATED_ORDER if any(p in d for d in results["workloads"].values())]
    return "\n".join(figure_rows(results, peers, REPLICATED_ROWS))


def baseline(exclude: Path | None = None) -> tuple[Path, dict] | None:
    """The newest full (not replicated, not quick) run in bench/results, for the single-node
    figures to compare with."""
    for path in sorted((HERE / "results").glob("*.json"), reverse=True):
        if path.stem.endswith("-replicated") or path == exclude:
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not data.get("quick"):
            return path, data
    return None


def replicated_targets(results: dict, json_path: Path | None = None) -> list[str]:
    """Issue 12's targets: replicated hand-off p50 ≤ 1 ms; replicated contended throughput ≥ 2×
    the better ensemble; the single node not worse than the last full run (noise aside)."""
    g = lambda w, p, k: _get(results, w, p, k)  # noqa: E731
    lines = []
    if results.get("plugin3_durability") == "memory":
        lines.append("**the plugin on three nodes ran with `locks.durability: memory`: its lock "
                     "state was not replicated, so these are not the replicated figures**")
    h = g("contended-16", "plugin-3", "handoff_p50_ms")
    if h is not None:
        lines.append(f"contended-16: plugin on 3 nodes hand-off p50 {h:.2f} ms (target ≤ 1 ms: "
                     f"{'met' if h <= 1.0 else 'not met'})")
    a = g("contended-16", "plugin-3", "grants_per_s")
    ens = {p: g("contended-16", p, "grants_per_s") for p in ("zookeeper-3", "etcd-3")}
    ens = {p: v for p, v in ens.items() if v}
    if a and ens:
        best = max(ens, key=ens.get)
        r = a / ens[best]
        lines.append(f"contended-16: critical sections/s plugin on 3 nodes / {LABEL[best]} (the "
                     f"better ensemble) = {a:,.0f} / {ens[best]:,.0f} = {r:.2f}× (target ≥ 2×: "
                     f"{'met' if r >= 2.0 else 'not met'})")
    for p3, p1 in (("plugin-3", "plugin"), ("zookeeper-3", "zookeeper"), ("etcd-3", "etcd")):
        a3, a1 = g("uncontended-1", p3, "pair_p50_ms"), g("uncontended-1", p1, "pair_p50_ms")
        if a3 and a1:
            lines.append(f"uncontended-1: p50 {LABEL[p3]} {a3:.2f} ms vs one server {a1:.2f} ms "
                         f"({a3 - a1:+.2f} ms)")
    base = baseline(json_path)
    if base:
        # the single node with the default durability (replicated: every change logged and
        # fsynced before the answer) and with `memory`; the memory figure is the like-for-like
        # of a full run measured before replication existed, the difference the cost of
        # durability
        path, old = base
        rel = path.relative_to(HERE).as_posix()
        modes = [(p, results.get(f"{p.replace('-', '_')}_durability") or default)
                 for p, default in (("plugin", "replicated"), ("plugin-memory", "memory"))]
        for w, k, what in (("uncontended-1", "pair_p50_ms", "p50 (ms)"),
                           ("contended-16", "grants_per_s", "critical sections/s"),
                           ("contended-16", "handoff_p50_ms", "hand-off p50 (ms)")):
            now = [f"plugin ({mode}) {f(g(w, p, k), 2)}" for p, mode in modes
                   if g(w, p, k) is not None]
            then = _get(old, w, "plugin", k)
            if now and then is not None:
                lines.append(f"single node, {w} {what}: {', '.join(now)} in this run vs "
                             f"{f(then, 2)} in [`{rel}`]({rel})")
        if results.get("plugin_memory_durability") not in (None, "memory"):
            lines.append("**the plugin-memory node ran with `locks.durability: "
                         f"{results['plugin_memory_durability']}`, not `memory`**")
    return lines


def replicated_section(results: dict, json_path: Path, png_path: Path | None) -> str:
    m = results["machine"]
    rel = lambda p: p.relative_to(HERE).as_posix() if p and HERE in p.parents else str(p)  # noqa: E731
    lines = [REPL_START, "", f"Run {results['started_utc']} with `{results['command']}` "
             f"({results['duration_s']} s measured + {results['warmup_s']} s warm-up per workload; "
             f"whole run {results.get('wall_s')} s). Raw figures: [`{rel(json_path)}`]"
             f"({rel(json_path)}).", "",
             f"Machine: {m.get('cpu')}, {m.get('cores')} cores, {m.get('memory')}, {m.get('os')}; "
             f"every server of every peer on it, beside the client. Load average before/after: "
             f"{', '.join(f'{x:.2f}' for x in m.get('loadavg_before', []))} / "
             f"{', '.join(f'{x:.2f}' for x in m.get('loadavg_after', []))}.", ""]
    other = results.get("other_load_at_start", []) + results.get("other_load_at_end", [])
    if other:
        lines += ["Other processes were busy on the machine during this run: "
                  + "; ".join(f"`{o}`" for o in other) + ".", ""]
    lines += ["Versions:", ""] + [f"- {k}: {v}" for k, v in results["versions"].items()
                                  if k in REPLICATED_ORDER]
    lines += ["", replicated_table(results), ""]
    lines += [x for n in issue15_notes(results) for x in (n, "")]
    lines += ["Targets (issue 12):", ""]
    lines += [f"- {t}" for t in replicated_targets(results, json_path)]
    errs = [f"{w}/{p}: {e}" for w, d in results["workloads"].items() for p, r in d.items()
            for e in r.get("errors", [])] + results.get("errors", [])
    if errs:
        lines += ["", "Errors in this run:", ""] + [f"- {e}" for e in errs]
    lines += ["", REPL_END]
    return "\n".join(lines)


def update_replicated_md(md: Path, results: dict, json_path: Path, png_path: Path | None) -> None:
    """Replaces the replicated section between its markers (RESULTS.md's
    '## Three nodes, replicated' section carries them); the rest of the file is kept."""
    text = md.read_text()
    if REPL_START not in text or REPL_END not in text:
        raise ValueError(f"{md} has no {REPL_START} ... {REPL_END} markers")
    new = replicated_section(results, json_path, png_path)
    text = text[:text.index(REPL_START)] + new + text[text.index(REPL_END) + len(REPL_END):]
    md.write_text(text)
