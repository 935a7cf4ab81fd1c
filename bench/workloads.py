"""Closed-loop client threads against one peer, and the figures computed from them.

Every client is one thread with its own connection/session (`peer.client(i)`). All threads
start together, run a warm-up, then a measured window of fixed length; only operations that
*start* inside the window are counted. Times come from one monotonic clock (`time.monotonic()`,
CLOCK_MONOTONIC, the same in every process), so a release in one thread and the next grant in
another are comparable: hand-off = next holder's grant received − previous holder's release sent.

Uncontended workloads may spread their threads over several forked client processes
(`run(..., procs=N)`): one Python process runs its threads one at a time (the GIL), and at 16+
clients it, not the server, set the pace."""

from __future__ import annotations

import multiprocessing
import queue
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from peers import WAIT_S, cpu_seconds


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


def jain(xs: list[float]) -> float | None:
    if not xs or not any(xs):
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


@dataclass
class Spec:
    name: str
    clients: int
    contended: bool  # one key for everybody, else one key per client
    hold_s: float = 0.0
    # mixed priority: the first `background` clients loop with priority background, the others
    # are foreground clients with a think time between their critical sections
    background: int = 0
    fg_think_s: tuple[float, float] = (0.0, 0.0)
    use_priority: bool = True
    # acquire + release one permit of a semaphore (`peer.semaphore_client`) instead of a lock
    semaphore: bool = False


@dataclass
class _Shared:
    lock: threading.Lock = field(default_factory=threading.Lock)
    holder: int | None = None
    last_release: float | None = None
    violations: int = 0
    handoffs: list = field(default_factory=list)


def run(peer, spec: Spec, duration: float, warmup: float, key_prefix: str, log=print,
        procs: int = 1) -> dict:
    """Runs `spec` against `peer`; answers its figures. With `procs` > 1 an uncontended
    workload's clients are split over that many forked client processes, so that Python's GIL
    (one core per process) does not cap what the servers are asked to do; contended workloads
    share one holder table and one clock, so they always run in this process."""
    n = spec.clients
    keys = [f"{key_prefix}" if spec.contended else f"{key_prefix}-{i}" for i in range(n)]
    for k in set(keys):
        peer.setup_key(k)
    procs = 1 if spec.contended or spec.background else max(1, min(procs, n))
    pid = peer.server_pid()
    if procs == 1:
        raw = _drive(peer, spec, list(range(n)), keys, warmup, duration, time.monotonic, pid)
    else:
        raw = _fork(peer, spec, procs, keys, warmup, duration, pid)
    raw["procs"] = procs
    return _figures(spec, n, duration, raw)


def _fork(peer, spec: Spec, procs: int, keys: list[str], warmup: float, duration: float,
          pid: int | None) -> dict:
    """`_drive` in `procs` forked processes, client ids dealt round robin; merges their raw
    figures. This process measures the server's CPU over the common window."""
    ctx = multiprocessing.get_context("fork")
    ready, go = ctx.Barrier(procs + 1), ctx.Barrier(procs + 1)
    start = ctx.Value("d", 0.0)
    answers = ctx.Queue()

    def synced() -> float:
        ready.wait(timeout=120)
        go.wait(timeout=120)
        return start.value

    def child(ids: list[int]) -> None:
        try:
            answers.put(_drive(peer, spec, ids, keys, warmup, duration, synced, None))
        except BaseException as e:  # noqa: BLE001 - reported to the parent, never raised there
            ready.abort()
            go.abort()
            answers.put({"errors": [f"client process: {type(e).__name__}: {e}"]})

    workers = [ctx.Process(target=child, args=(list(range(k, spec.clients, procs)),), daemon=True)
               for k in range(procs)]
    for w in workers:
        w.start()
    errors: list[str] = []
    cpu_s = None
    try:
        ready.wait(timeout=120)
        start.value = time.monotonic()
        go.wait(timeout=120)
        begin = start.value + warmup
        time.sleep(max(0.0, begin - time.monotonic()))
        cpu_s0, w0 = cpu_seconds(pid), time.monotonic()
        time.sleep(max(0.0, begin + duration - time.monotonic()))
        cpu_s1, w1 = cpu_seconds(pid), time.monotonic()
        if cpu_s0 is not None and cpu_s1 is not None:
            cpu_s = (cpu_s1 - cpu_s0, w1 - w0)
    except threading.BrokenBarrierError:
        errors.append("a client process failed before the start")
    parts = []
    for _ in workers:
        try:
            parts.append(answers.get(timeout=WAIT_S + 60))
        except queue.Empty:
            errors.append("a client process did not answer")
            break
    for w in workers:
        w.join(timeout=10)
        if w.is_alive():
            w.kill()
    merged = {"errors": errors, "clients": {}, "handoffs": [], "violations": 0,
              "client_cpu": (0.0, 0.0), "server_cpu": cpu_s}
    for part in parts:
        merged["errors"] += part.get("errors", [])
        merged["clients"].update(part.get("clients", {}))
        if part.get("client_cpu"):
            c, wall = part["client_cpu"]
            merged["client_cpu"] = (merged["client_cpu"][0] + c, max(merged["client_cpu"][1], wall))
    return merged


def _drive(peer, spec: Spec, ids: list[int], keys: list[str], warmup: float, duration: float,
           synced, pid: int | None) -> dict:
    """Runs the clients `ids` as threads of this process. `synced()` answers the common start
    time once every process is ready; with `pid`, also measures the server's CPU."""
    make = peer.semaphore_client if spec.semaphore else peer.client
    with ThreadPoolExecutor(max_workers=min(16, len(ids))) as ex:
        clients = dict(zip(ids, ex.map(make, ids)))
    shared = _Shared()
    go = threading.Event()
    t_start = [0.0]
    stats = {i: {"grants": 0, "acq": [], "pair": [], "req0": None, "req1": 0} for i in ids}
    errors: list[str] = []

    def worker(i: int):
        c = clients[i]
        key = keys[i]
        st = stats[i]
        bg = i < spec.background
        prio = "background" if (bg and spec.use_priority) else "foreground"
        rnd = random.Random(1000 + i)
        try:
            go.wait()
            begin = t_start[0] + warmup
            end = begin + duration
            while True:
                if spec.background and not bg:
                    time.sleep(rnd.uniform(*spec.fg_think_s))
                t0 = time.monotonic()
                if t0 >= end:
                    break
                measured = t0 >= begin
                if measured and st["req0"] is None:
                    st["req0"] = c.requests
                tok = c.acquire(key, prio)
                t1 = time.monotonic()
                if spec.contended:
                    with shared.lock:
                        if shared.holder is not None:
                            shared.violations += 1
                        shared.holder = i
                        if measured and shared.last_release is not None and t0 < shared.last_release:
                            shared.handoffs.append(t1 - shared.last_release)
                if spec.hold_s:
                    time.sleep(spec.hold_s)
                if spec.contended:
                    with shared.lock:
                        shared.holder = None
                        shared.last_release = time.monotonic()
                c.release(key, tok)
                t2 = time.monotonic()
                if measured:
                    st["grants"] += 1
                    st["acq"].append(t1 - t0)
                    st["pair"].append(t2 - t0)
                    st["req1"] = c.requests
        except Exception as e:  # noqa: BLE001 - recorded in the results
            errors.append(f"client {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in ids]
    for t in threads:
        t.start()
    try:
        t_start[0] = synced()
    finally:
        go.set()  # also when the start failed: the workers see a window in the past and stop
    begin = t_start[0] + warmup
    time.sleep(max(0.0, begin - time.monotonic()))
    cpu_c0, cpu_s0, w0 = time.process_time(), cpu_seconds(pid), time.monotonic()
    time.sleep(max(0.0, begin + duration - time.monotonic()))
    cpu_c1, cpu_s1, w1 = time.process_time(), cpu_seconds(pid), time.monotonic()
    for t in threads:
        t.join(timeout=WAIT_S + 15)
    stuck = sum(t.is_alive() for t in threads)
    if stuck:
        errors.append(f"{stuck} client threads still running after the window")
    with ThreadPoolExecutor(max_workers=min(16, len(ids))) as ex:
        list(ex.map(lambda c: c.close(), clients.values()))
    return {
        "clients": stats,
        "handoffs": shared.handoffs,
        "violations": shared.violations,
        "client_cpu": (cpu_c1 - cpu_c0, w1 - w0),
        "server_cpu": (cpu_s1 - cpu_s0, w1 - w0) if cpu_s0 is not None and cpu_s1 is not None else None,
        "errors": errors,
    }


def _figures(spec: Spec, n: int, duration: float, raw: dict) -> dict:
    """The workload's figures from the clients' raw counts and latencies."""
    st = raw["clients"]
    ids = range(n)
    grants = [st[i]["grants"] if i in st else 0 for i in ids]
    total = sum(grants)
    reqs = sum(st[i]["req1"] - st[i]["req0"] for i in st if st[i]["req0"] is not None and st[i]["grants"])
    fg = [i for i in st if i >= spec.background]
    bgc = [i for i in st if i < spec.background]
    all_acq = [x for i in st for x in st[i]["acq"]]
    all_pair = [x for i in st for x in st[i]["pair"]]
    client_cpu, wall = raw["client_cpu"]
    server = raw["server_cpu"]
    res = {
        "clients": n,
        "client_processes": raw.get("procs", 1),
        "duration_s": round(duration, 3),
        "grants": total,
        "grants_per_s": total / duration,
        "pair_p50_ms": _ms(pct(all_pair, 50)),
        "pair_p99_ms": _ms(pct(all_pair, 99)),
        "acquire_p50_ms": _ms(pct(all_acq, 50)),
        "acquire_p99_ms": _ms(pct(all_acq, 99)),
        "requests_per_grant": (reqs / total) if total else None,
        "client_cpu_pct": 100.0 * client_cpu / wall if wall else None,
        "server_cpu_pct": 100.0 * server[0] / server[1] if server and server[1] else None,
        "server_cpu_ms_per_grant": 1000.0 * server[0] / total if server and total else None,
        "errors": raw["errors"][:5],
    }
    if len(st) < n and not raw["errors"]:
        res["errors"].append(f"only {len(st)} of {n} clients reported")
    if spec.contended:
        res.update({
            "handoff_p50_ms": _ms(pct(raw["handoffs"], 50)),
            "handoff_p99_ms": _ms(pct(raw["handoffs"], 99)),
            "handoffs": len(raw["handoffs"]),
            "jain": jain(grants),
            "min_max_grants": [min(grants), max(grants)],
            "mutual_exclusion_violations": raw["violations"],
        })
    if spec.background:
        fg_w = [x for i in fg for x in st[i]["acq"]]
        bg_w = [x for i in bgc for x in st[i]["acq"]]
        res.update({
            "fg_wait_p50_ms": _ms(pct(fg_w, 50)), "fg_wait_p99_ms": _ms(pct(fg_w, 99)),
            "fg_wait_max_ms": _ms(max(fg_w) if fg_w else None), "fg_grants": len(fg_w),
            "bg_wait_p50_ms": _ms(pct(bg_w, 50)), "bg_wait_p99_ms": _ms(pct(bg_w, 99)),
            "bg_grants": len(bg_w),
        })
    return res


def _ms(x):
    return None if x is None else x * 1000.0
