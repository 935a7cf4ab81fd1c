"""A cluster under load with long holders, for the tests that change the cluster itself step by step
(tests/integration/test_upgrade.py: upgrades; test_membership.py: nodes added, removed, replaced,
all killed at once): long holders taken before the first step (10-minute leases, over both
partitions), clients taking and releasing locks all along (tests/integration/workers.py), and after
every step the holders checked through every node; at the end the clients' history checked as the
fault test's is (tests/integration/history.py) and the holders' next tokens proven larger."""

from __future__ import annotations

import threading
import time
from collections import Counter

import requests

from cluster_kit import http
from history import History, check, longest_gaps
from lockclient import wait_until
from workers import Holder, Load, Worker

LONG_LEASE = "10m"  # the plugin's default locks.lease.max: outlives the whole test
HELD = 6  # long holders, spread over the partitions
TRAFFIC_KEYS = ("traffic-a", "traffic-b")
GREEN_S = 240  # a node started on a loaded two-core machine, then its replicas recovered


def served_state(node, key):
    try:
        r = http(node, "GET", f"/_locks/{key}", timeout=10)
    except requests.RequestException:
        return None
    return r.json() if r.status_code == 200 else None


class HeldLoad:
    """`cluster` (scripts/node.py's Cluster, started) with long holders and clients seeded by `seed`."""

    def __init__(self, cluster, seed: int, traffic_keys: tuple[str, ...] = TRAFFIC_KEYS):
        self.cluster, self.seed, self.traffic_keys = cluster, seed, traffic_keys
        self.history, self.stop = History(), threading.Event()
        self.held: dict[str, tuple[str, int]] = {}
        self.steps: list[tuple[str, float, float]] = []  # (what, started, green)
        self.ids_unkept: list[tuple[float, float]] = []  # windows where a retry may be a new acquisition
        load = Load(seed=seed, keys=traffic_keys, lease_s=5, hold_lease_s=10, hold_s=(3, 8), wait_s=3)
        self.workers = [Worker(i, cluster, self.history, self.stop, load) for i in range(2)]
        self.workers.append(Holder(0, cluster, self.history, self.stop, load))

    def hold_long(self) -> None:
        node = self.cluster.nodes[0]
        for i in range(HELD):
            key, owner = f"long-{i}", f"long-holder-{i}"
            r = http(node, "POST", f"/_locks/{key}/_acquire", {"owner": owner, "lease": LONG_LEASE})
            assert r.status_code == 200, r.text
            self.held[key] = (owner, r.json()["fencing_token"])
        partitions = {lock["partition"] for lock in http(node, "GET", "/_locks?prefix=long-").json()["locks"]}
        assert len(partitions) == 2, f"the long holders all landed in partitions {partitions}: pick other keys"

    def start_clients(self) -> None:
        for w in self.workers:
            w.thread.start()

    def step(self, what: str, started: float) -> None:
        """A step done: recorded, then the holders checked and the clients seen granted again."""
        self.steps.append((what, started, time.monotonic()))
        self.assert_kept(f"after {what}")
        self.assert_resumed()

    @staticmethod
    def green(node, nodes: int = 3) -> None:
        r = http(node, "GET", f"/_cluster/health?wait_for_nodes={nodes}&wait_for_status=green&timeout={GREEN_S}s",
                 timeout=GREEN_S + 10)
        assert r.status_code == 200 and not r.json()["timed_out"], r.text

    def live_nodes(self) -> list:
        return [n for n in self.cluster.nodes if n.process is not None and n.process.poll() is None]

    def assert_kept(self, when: str) -> None:
        """Through every live node: each long holder still holds its key with its token, and
        another owner's acquire is refused. A partition that is still opening answers 503 for a
        moment: asked again until it serves, within a bound."""
        for node in self.live_nodes():
            for key, (owner, token) in self.held.items():
                state = wait_until(lambda: served_state(node, key), timeout=60,
                                   message=f"{key} served through {node.name} {when}")
                holders = [(h["owner"], h["fencing_token"]) for h in state["holders"]]
                assert holders == [(owner, token)], f"{key} through {node.name} {when}: {holders}"
                assert 0 < state["holders"][0]["lease_ms"] <= 600_000, f"{key} lease {state['holders'][0]}"
            key = next(iter(self.held))
            r = http(node, "POST", f"/_locks/{key}/_acquire", {"owner": "intruder", "wait": "0s"})
            assert r.status_code == 409, f"{key} acquired by another owner through {node.name} {when}: {r.text}"

    def assert_resumed(self) -> None:
        """The clients are granted locks again after the last step, on every traffic key."""
        what, _, green = self.steps[-1]
        for key in self.traffic_keys:
            wait_until(lambda: any(op.f == "acquire" and op.type == "ok" and op.key == key and op.complete > green
                                   for op in self.history.ops()),
                       timeout=60, interval=0.2, message=f"seed {self.seed}: a grant of {key} after {what}")

    def finish(self) -> None:
        """Stops the clients; checks the history; releases the long holders and proves the next
        tokens of their keys, and of the traffic keys, larger than any answered before."""
        self.stop.set()
        self.history.end()
        for w in self.workers:
            w.thread.join(60)
        assert not [w.name for w in self.workers if w.thread.is_alive()], "a client did not stop"
        report = check(self.history, keys=self.traffic_keys, ids_unkept=self.ids_unkept)
        print(f"\nseed {self.seed}\n" + report.summary(origin=self.history.started), flush=True)
        self.print_steps()
        assert report.violations == [], f"seed {self.seed}: " + report.summary(origin=self.history.started)
        node = self.live_nodes()[-1]
        for key, (owner, token) in self.held.items():
            r = http(node, "POST", f"/_locks/{key}/_release", {"owner": owner, "fencing_token": token})
            assert r.status_code == 200, f"{key}: {r.text}"
        answered = self.answered_tokens()
        for key in [*self.held, *self.traffic_keys]:
            before = max(answered.get(key, 0), self.held.get(key, ("", 0))[1])
            r = wait_until(lambda: acquired(node, key), timeout=60, message=f"{key} granted at the end")
            assert r["fencing_token"] > before, f"{key}: token {r['fencing_token']} after {before}"

    def answered_tokens(self) -> dict[str, int]:
        """The largest token answered per traffic key in the clients' history."""
        out: dict[str, int] = {}
        for op in self.history.ops():
            token = getattr(op, "token", None)
            if op.type == "ok" and op.key and token:
                out[op.key] = max(out.get(op.key, 0), token)
        return out

    def print_steps(self) -> None:
        ops = self.history.ops()
        origin = self.history.started
        for what, started, green in self.steps:
            window = [op for op in ops if op.process != "nemesis" and started <= op.invoke <= green + 5]
            refused = Counter(op.status for op in window if op.type == "fail" and op.status != "not connected")
            unsent = sum(op.status == "not connected" for op in window)
            unknown = sum(op.type == "info" for op in window)
            gaps = longest_gaps(ops, started, green + 5, self.traffic_keys)
            longest = max(gaps.values(), key=lambda g: g.seconds)
            print(f"  {what}: {started - origin:6.1f}s to green at {green - origin:6.1f}s; "
                  f"longest without a grant {longest.seconds:.1f}s on {longest.key}; of {len(window)} "
                  f"requests {unknown} unknown, {unsent} not sent (a node not listening yet), refused: "
                  f"{dict(refused)}", flush=True)

    def close(self) -> None:
        self.stop.set()
        self.cluster.stop()


def acquired(node, key: str):
    """A fresh owner's grant of `key` through `node` (released at once), or None while refused."""
    r = http(node, "POST", f"/_locks/{key}/_acquire", {"owner": "next", "acquisition": "next", "wait": "5s"})
    if r.status_code != 200:
        return None
    http(node, "POST", f"/_locks/{key}/_release", {"owner": "next", "acquisition": "next"})
    return r.json()
