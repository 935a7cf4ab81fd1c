#!/usr/bin/env python3
"""Soak run: mixed lock traffic against one real node for a long time, then a check that
nothing leaked (docs/RELIABILITY.md "Soak").

    python3 tests/soak.py --minutes 10            # the run whose figures docs/RELIABILITY.md quotes
    python3 tests/soak.py --seconds 45 --no-flat  # a short run (tests/test_soak_smoke.py)

Traffic, from `--clients` threads, seeded: acquire / renew / release of exclusive and shared
locks on a pool of keys (the exclusive ones checked for two holders at once, each grant's token
written to a fenced counter in-process), try-locks that conflict, waits that time out on a key
kept busy, sessions (created, locks taken under them, kept alive, ended or left to expire),
multi-locks over hash-tagged keys, tree locks, and clients that hang up while waiting.

Every 5 s a sample: the node's resident memory (VmRSS of the JVM, /proc) and the memory the
lock core reports (`_locks/_stats`). At the end, with traffic stopped and the sessions' TTL run
out: no lock held, no waiter, no session, no pending request; and (unless --no-flat) the mean
of the last minute's samples within 10 % of the first minute's, for both figures. Prints the
figures; exits non-zero on any violation."""

from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "scripts"))
sys.path.insert(0, str(HERE / "integration"))

import node as esnode  # noqa: E402
from lockclient import LockClient  # noqa: E402

SESSION_TTL = "3s"
BUSY_KEY = "soak-busy"  # held by BLOCKER all run: every wait on it times out
BLOCKER = "soak-blocker"
BLOCKER_LEASE = "1m"
FLAT_TOLERANCE = 0.10


class Soak:
    def __init__(self, node, clients: int, seed: int, deadline: float):
        self.node = node
        self.clients = clients
        self.seed = seed
        self.deadline = deadline
        self.guard = threading.Lock()
        self.holding: dict[str, tuple[str, int]] = {}
        self.last_token: dict[str, int] = {}
        self.violations: list[str] = []
        self.counts: dict[str, int] = {}
        self.samples: list[tuple[float, int, int]] = []

    # --- bookkeeping ------------------------------------------------------------------------

    def count(self, what: str) -> None:
        with self.guard:
            self.counts[what] = self.counts.get(what, 0) + 1

    def violation(self, text: str) -> None:
        with self.guard:
            if len(self.violations) < 50:
                self.violations.append(text)

    def expect(self, r, statuses: tuple[int, ...], what: str) -> bool:
        """Counts `what` by status; anything else (a 5xx above all) is a violation."""
        self.count(f"{what} {r.status_code}")
        if r.status_code not in statuses:
            self.violation(f"{what}: {r.status_code} {r.text[:300]}")
            return False
        return r.status_code == 200

    # --- the traffic ------------------------------------------------------------------------

    def exclusive_work(self, lc: LockClient, rng: random.Random, me: str) -> None:
        k = f"soak-x-{rng.randrange(32)}"
        r = lc.acquire(k, me, wait="2s", lease="20s")
        if not self.expect(r, (200, 409), "acquire exclusive"):
            return
        token = r.json()["fencing_token"]
        with self.guard:
            if k in self.holding:
                self.violations.append(f"{me} granted {k} while {self.holding[k]} holds it")
            if token <= self.last_token.get(k, 0):
                self.violations.append(f"{k}: token {token} after {self.last_token[k]}")
            self.holding[k] = (me, token)
            self.last_token[k] = token
        if rng.random() < 0.3:
            self.expect(lc.renew(k, me, fencing_token=token, lease="20s"), (200,), "renew")
        with self.guard:
            if self.holding.get(k) != (me, token):
                self.violations.append(f"{k}: {self.holding.get(k)} replaced {me} while it held")
            self.holding.pop(k, None)
        self.expect(lc.release(k, me, fencing_token=token), (200,), "release")

    def shared_work(self, lc: LockClient, rng: random.Random, me: str) -> None:
        k = f"soak-s-{rng.randrange(8)}"
        if self.expect(lc.acquire(k, me, mode="shared", wait="1s", lease="20s"), (200, 409), "acquire shared"):
            self.expect(lc.release(k, me), (200,), "release shared")

    def timed_out_wait(self, lc: LockClient, rng: random.Random, me: str) -> None:
        r = lc.acquire(BUSY_KEY, me, wait=f"{rng.choice([50, 100, 200])}ms")
        self.expect(r, (409,), "wait on busy key")

    def session_work(self, lc: LockClient, rng: random.Random, me: str) -> None:
        r = lc.session_create(me, ttl=SESSION_TTL, routing=f"sess-{me}")
        if not self.expect(r, (200,), "session create"):
            return
        sid = r.json()["session"]
        for i in range(2):
            self.expect(lc.acquire(f"{{sess-{me}}}k{i}-{rng.randrange(4)}", me, session=sid, wait="1s"),
                        (200, 409), "acquire in session")
        if rng.random() < 0.5:
            self.expect(lc.session_keepalive(sid, me), (200,), "keepalive")
        if rng.random() < 0.7:  # else: abandoned, it expires after SESSION_TTL
            self.expect(lc.session_delete(sid, me), (200,), "session end")

    def multi_work(self, lc: LockClient, rng: random.Random, me: str) -> None:
        tag = f"m{rng.randrange(6)}"
        locks = [{"key": f"{{{tag}}}part-{i}"} for i in rng.sample(range(6), 3)]
        if self.expect(lc.multi_acquire(me, locks, wait="1s", lease="20s"), (200, 409), "multi acquire"):
            self.expect(lc.multi_release(me, locks=locks), (200,), "multi release")

    def tree_work(self, lc: LockClient, rng: random.Random, me: str) -> None:
        path = f"/soak/{rng.randrange(4)}" + (f"/{rng.randrange(4)}" if rng.random() < 0.7 else "")
        mode = rng.choice(["shared", "exclusive"])
        if self.expect(lc.acquire(path, me, scope="tree", mode=mode, wait="1s", lease="20s"), (200, 409),
                       "acquire tree"):
            self.expect(lc.release(path, me, scope="tree"), (200,), "release tree")

    def hang_up_while_waiting(self, rng: random.Random, me: str) -> None:
        """A raw client queues on the busy key and goes away: its waiter must be cancelled."""
        body = json.dumps({"owner": me, "wait": "30s"}).encode()
        request = (f"POST /_locks/{BUSY_KEY}/_acquire HTTP/1.1\r\nHost: x\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
        with socket.create_connection(("127.0.0.1", self.node.http_port), timeout=10) as s:
            s.sendall(request)
            time.sleep(rng.uniform(0.01, 0.1))  # traffic shape, not synchronisation
        self.count("hung up")

    def client(self, i: int) -> None:
        rng = random.Random(self.seed * 1000 + i)
        me = f"soak-c{i}"
        lc = LockClient(self.node.url, timeout=60)
        work = [self.exclusive_work] * 5 + [self.shared_work] * 2 + [self.timed_out_wait, self.session_work,
                                                                      self.multi_work, self.tree_work]
        try:
            while time.monotonic() < self.deadline:
                if rng.random() < 0.02:
                    self.hang_up_while_waiting(rng, me)
                else:
                    rng.choice(work)(lc, rng, me)
        except Exception as e:  # a dropped connection or a hang is a finding too
            self.violation(f"client {i}: {type(e).__name__}: {e}")
        finally:
            lc.close()

    # --- sampling ---------------------------------------------------------------------------

    def rss_bytes(self) -> int:
        pid = self.node.server_pid()
        if pid is None:
            raise RuntimeError("the node's server JVM is gone")
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def core_bytes(self, lc: LockClient) -> int:
        return int(lc.stats().json()["total"]["memory_bytes"])

    def sampler(self, lc: LockClient, stop: threading.Event, started: float) -> None:
        """Every 5 s: a memory sample, and a renewal of the blocker's hold on the busy key (a
        run may outlast `locks.lease.max`, the longest lease a grant can have)."""
        while not stop.wait(5.0):
            self.expect(lc.renew(BUSY_KEY, BLOCKER, lease=BLOCKER_LEASE), (200,), "renew blocker")
            self.samples.append((time.monotonic() - started, self.rss_bytes(), self.core_bytes(lc)))


def drained(lc: LockClient) -> dict:
    stats = lc.stats().json()["total"]
    return {"held": stats["held"], "waiting": stats["waiting"], "sessions": stats["sessions"],
            "pending_requests": lc.diagnostics().json()["pending_requests"]}


def flatness(samples, seconds: float) -> dict:
    first = [s for s in samples if s[0] <= 60]
    last = [s for s in samples if s[0] >= seconds - 60]
    out = {}
    for name, idx in (("rss", 1), ("core", 2)):
        a, b = statistics.mean(s[idx] for s in first), statistics.mean(s[idx] for s in last)
        out[name] = {"first_minute_mean": round(a), "last_minute_mean": round(b),
                     "change": round((b - a) / a, 4) if a else 0.0}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--seconds", type=float, help="overrides --minutes")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-flat", action="store_true", help="skip the memory flatness check (short runs)")
    args = ap.parse_args()
    seconds = args.seconds or args.minutes * 60
    version = esnode.es_version()
    node = esnode.Node("eslm-soak", "node-0", esnode.free_port(), esnode.free_port())
    node.install(version, esnode.plugin_zip(version))
    node.start()
    try:
        node.wait_until_ready()
        lc = LockClient(node.url, timeout=60)
        busy = lc.acquire(BUSY_KEY, BLOCKER, lease=BLOCKER_LEASE)
        assert busy.status_code == 200, busy.text
        started = time.monotonic()
        soak = Soak(node, args.clients, args.seed, started + seconds)
        stop = threading.Event()
        sampler = threading.Thread(target=soak.sampler, args=(lc, stop, started), daemon=True)
        sampler.start()
        threads = [threading.Thread(target=soak.client, args=(i,)) for i in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=seconds + 120)
            if t.is_alive():
                soak.violation("a client did not finish: a request hung")
        stop.set()
        sampler.join(timeout=30)
        lc.release(BUSY_KEY, BLOCKER)
        # Abandoned sessions expire after their TTL; hung-up waiters were cancelled long ago.
        end = time.monotonic() + 30
        state = drained(lc)
        while any(state.values()) and time.monotonic() < end:
            time.sleep(0.2)  # polling the node's own counters until they drain (bounded)
            state = drained(lc)
        if any(state.values()):
            soak.violation(f"not drained after traffic stopped: {state}")
        report = {"seconds": seconds, "clients": args.clients, "seed": args.seed,
                  "requests": sum(v for k, v in soak.counts.items()), "counts": dict(sorted(soak.counts.items())),
                  "drained": state, "samples": len(soak.samples),
                  "first_sample": soak.samples[0] if soak.samples else None,
                  "last_sample": soak.samples[-1] if soak.samples else None}
        if not args.no_flat:
            report["flatness"] = flatness(soak.samples, seconds)
            for name, f in report["flatness"].items():
                if abs(f["change"]) > FLAT_TOLERANCE:
                    soak.violation(f"{name} memory moved {f['change']:+.1%} from the first minute to the last")
        report["violations"] = soak.violations
        print(json.dumps(report, indent=2))
        return 1 if soak.violations else 0
    finally:
        code = node.stop()
        if code not in (0, 143, None):
            print(f"node exited with {code}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
