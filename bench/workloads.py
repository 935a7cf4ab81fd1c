"""Closed-loop client threads against one peer, and the figures computed from them.

Every client is one thread with its own connection/session (`peer.client(i)`). All threads
start together, run a warm-up, then a measured window of fixed length; only operations that
*start* inside the window are counted. Times come from one shared monotonic clock
(`time.monotonic()` in this process), so a release in one thread and the next grant in another
are comparable: hand-off = next holder's grant received − previous holder's release sent."""

from __future__ import annotations

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


@dataclass
class _Shared:
    lock: threading.Lock = field(default_factory=threading.Lock)
    holder: int | None = None
    last_release: float | None = None
    violations: int = 0
    handoffs: list = field(default_factory=list)


def run(peer, spec: Spec, duration: float, warmup: float, key_prefix: str, log=print) -> dict:
    n = spec.clients
    keys = [f"{key_prefix}" if spec.contended else f"{key_prefix}-{i}" for i in range(n)]
    for k in set(keys):
        peer.setup_key(k)
    with ThreadPoolExecutor(max_workers=min(16, n)) as ex:
        clients = list(ex.map(peer.client, range(n)))
    shared = _Shared()
    barrier = threading.Barrier(n + 1)
    t_start = [0.0]
    grants = [0] * n
    acq_lat: list[list[float]] = [[] for _ in range(n)]  # acquire call → grant
    pair_lat: list[list[float]] = [[] for _ in range(n)]  # acquire call → release answered
    req0 = [None] * n
    req1 = [0] * n
    errors: list[str] = []

    def worker(i: int):
        c = clients[i]
        key = keys[i]
        bg = i < spec.background
        prio = "background" if (bg and spec.use_priority) else "foreground"
        rnd = random.Random(1000 + i)
        try:
            barrier.wait()
            begin = t_start[0] + warmup
            end = begin + duration
            while True:
                if spec.background and not bg:
                    time.sleep(rnd.uniform(*spec.fg_think_s))
                t0 = time.monotonic()
                if t0 >= end:
                    break
                measured = t0 >= begin
                if measured and req0[i] is None:
                    req0[i] = c.requests
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
                    grants[i] += 1
                    acq_lat[i].append(t1 - t0)
                    pair_lat[i].append(t2 - t0)
                    req1[i] = c.requests
        except Exception as e:  # noqa: BLE001 - recorded in the results
            errors.append(f"client {i}: {type(e).__name__}: {e}")
            try:
                barrier.abort()
            except Exception:
                pass

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    pid = peer.server_pid()
    try:
        t_start[0] = time.monotonic()
        barrier.wait(timeout=60)
    except threading.BrokenBarrierError:
        pass
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
    with ThreadPoolExecutor(max_workers=min(16, n)) as ex:
        list(ex.map(lambda c: c.close(), clients))

    total = sum(grants)
    reqs = sum(req1[i] - req0[i] for i in range(n) if req0[i] is not None and grants[i])
    fg = [i for i in range(n) if i >= spec.background]
    bgc = [i for i in range(n) if i < spec.background]
    all_acq = [x for i in range(n) for x in acq_lat[i]]
    all_pair = [x for i in range(n) for x in pair_lat[i]]
    wall = w1 - w0
    res = {
        "clients": n,
        "duration_s": round(duration, 3),
        "grants": total,
        "grants_per_s": total / duration,
        "pair_p50_ms": _ms(pct(all_pair, 50)),
        "pair_p99_ms": _ms(pct(all_pair, 99)),
        "acquire_p50_ms": _ms(pct(all_acq, 50)),
        "acquire_p99_ms": _ms(pct(all_acq, 99)),
        "requests_per_grant": (reqs / total) if total else None,
        "client_cpu_pct": 100.0 * (cpu_c1 - cpu_c0) / wall if wall else None,
        "server_cpu_pct": (100.0 * (cpu_s1 - cpu_s0) / wall) if cpu_s0 is not None and cpu_s1 is not None else None,
        "server_cpu_ms_per_grant": (1000.0 * (cpu_s1 - cpu_s0) / total) if total and cpu_s0 is not None and cpu_s1 is not None else None,
        "errors": errors[:5],
    }
    if spec.contended:
        res.update({
            "handoff_p50_ms": _ms(pct(shared.handoffs, 50)),
            "handoff_p99_ms": _ms(pct(shared.handoffs, 99)),
            "handoffs": len(shared.handoffs),
            "jain": jain([grants[i] for i in range(n)]),
            "min_max_grants": [min(grants), max(grants)],
            "mutual_exclusion_violations": shared.violations,
        })
    if spec.background:
        fg_w = [x for i in fg for x in acq_lat[i]]
        bg_w = [x for i in bgc for x in acq_lat[i]]
        res.update({
            "fg_wait_p50_ms": _ms(pct(fg_w, 50)), "fg_wait_p99_ms": _ms(pct(fg_w, 99)),
            "fg_wait_max_ms": _ms(max(fg_w) if fg_w else None), "fg_grants": len(fg_w),
            "bg_wait_p50_ms": _ms(pct(bg_w, 50)), "bg_wait_p99_ms": _ms(pct(bg_w, 99)),
            "bg_grants": len(bg_w),
        })
    return res


def _ms(x):
    return None if x is None else x * 1000.0
