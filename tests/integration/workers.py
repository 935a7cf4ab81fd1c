"""The clients of the fault tests (tests/integration/test_nemesis.py, test_upgrade.py): worker
threads that take and release keys through random live nodes, holders that keep a key for
seconds renewing it (and now and then watching it or sending their acquire again), and readers
that read keys, each recording every operation in a history (tests/integration/history.py) with
its outcome: ok, fail (certainly did not happen) or info (unknown); and probers, one per node, that
take a fresh key through their node every moment: how long a fault keeps a new request from any
grant, whatever the shared keys' holders do."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass

import requests
import urllib3

from history import ACQUIRE, READ, RELEASE, RENEW, WATCH, History
from nemesis import running


@dataclass(frozen=True)
class Load:
    """What the workers do: `seed` fixes their choices (keys, nodes, hold times), `keys` are the
    keys they share; a short hold's lease `lease_s`, a holder's `hold_lease_s` renewed every
    `renew_every_s` for `hold_s` (a range); an acquire queues up to `wait_s`."""

    seed: int
    keys: tuple[str, ...]
    lease_s: float = 5
    hold_lease_s: float = 10
    hold_s: tuple[float, float] = (5, 20)
    renew_every_s: float = 1
    wait_s: float = 3
    connect_s: float = 2
    admin_s: float = 15

    @property
    def answer_s(self) -> float:
        """An acquire's answer may take its wait plus a slow hop or two."""
        return self.wait_s + 7


def never_sent(e: requests.RequestException) -> bool:
    """No connection was made (refused: the node is down or still starting; or the connect timed
    out), so the request never left: a certain failure, unlike a reset or a read timeout."""
    if isinstance(e, requests.ConnectTimeout):
        return True
    reason = getattr(e.args[0] if e.args else None, "reason", None)
    return isinstance(reason, urllib3.exceptions.NewConnectionError)


def outcome(history: History, op, response: requests.Response):
    """Records an answer: 200 happened; a 4xx or 503 (unavailable, retryable) certainly did not;
    any other status may or may not have happened. Returns the body of a 200, else None."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code == 200:
        return body
    error = body.get("error") if isinstance(body, dict) else None
    status = f"{response.status_code} {error.get('type') if isinstance(error, dict) else ''}".strip()
    definite = 400 <= response.status_code < 500 or response.status_code == 503
    (history.fail if definite else history.info)(op, status=status)
    return None


class Worker:
    """One worker taking random keys through random nodes: acquire (queued up to `wait_s`), hold a
    moment, release by token and acquisition id. An acquire whose outcome is unknown is followed
    by a release that names only its acquisition id, so a grant nobody heard of does not block the
    key for a whole lease.

    Each acquisition has an owner of its own (`w0-17`: the worker and a count), as a careful
    client has: a release without a token that a partition holds up can then only end the grant it
    was meant for. With one owner per worker, the first runs of this test saw such a release, sent
    through a cut-off node and delivered 22 s later when the cut healed, end the same worker's
    next grant of the key (the server did as asked; the worker had moved on)."""

    def __init__(self, index: int, cluster, history: History, stop: threading.Event, load: Load,
                 prefix: str = "w"):
        self.name = f"{prefix}{index}"
        self.owner = self.name
        self.acquisitions = 0
        self.cluster, self.history, self.stop, self.load = cluster, history, stop, load
        self.rng = random.Random(f"{load.seed}-{self.name}")
        self.http = requests.Session()
        self.thread = threading.Thread(target=self.run, name=self.name, daemon=True)

    def next_owner(self) -> None:
        self.acquisitions += 1
        self.owner = f"{self.name}-{self.acquisitions}"

    def run(self) -> None:
        while not self.stop.is_set():
            key = self.rng.choice(self.load.keys)
            self.next_owner()
            granted, token = self.acquire(key)
            if granted:
                time.sleep(self.rng.uniform(0.01, 0.2))  # the critical section
            if granted or granted is None:
                self.release(key, token)
            if not granted:
                time.sleep(self.rng.uniform(0.05, 0.2))  # back off: the node may be down or starting

    def node(self, avoid=()):
        nodes = [n for n in running(self.cluster) if n not in avoid] or self.cluster.nodes
        return self.rng.choice(nodes)

    def post(self, op, node, path: str, body: dict | None, timeout: float, method: str = "POST"):
        """One request, recorded: the body of a 200, or None (outcome recorded as fail/info). A
        node of a plugin without acquisitions (a cluster being upgraded) refuses the field with
        400 before doing anything: the request goes again to it without the field, as
        docs/OPERATIONS.md "Upgrading from a plugin without acquisitions" tells REST callers."""
        try:
            r = self.http.request(method, node.url + path, json=body, timeout=(self.load.connect_s, timeout))
            if body is not None and r.status_code == 400 and "unknown field [acquisition]" in r.text:
                body = {k: v for k, v in body.items() if k != "acquisition"}
                r = self.http.request(method, node.url + path, json=body, timeout=(self.load.connect_s, timeout))
        except requests.RequestException as e:
            if never_sent(e):
                self.history.fail(op, status="not connected")
            else:
                self.history.info(op, status=type(e).__name__)
            return None
        return outcome(self.history, op, r)

    def acquire(self, key: str, lease_s: float | None = None, wait_s: float | None = None,
                again: bool = False):
        """(True, token) when granted, (False, None) when certainly not, (None, None) when
        unknown. Each acquire is its own acquisition (docs/API.md "Acquisitions"), whatever the
        owner name: a late release or renewal of this one never ends the next; `again` sends
        the last one again (a re-entrant retry: it gets the same grant back while it holds)."""
        lease_s = self.load.lease_s if lease_s is None else lease_s
        wait_s = self.load.wait_s if wait_s is None else wait_s
        if not again:
            self.acquisitions += 1
            self.acquisition = f"{self.owner}#{self.acquisitions}"
        node = self.node()
        op = self.history.invoke(self.name, ACQUIRE, key=key, owner=self.owner, lease_s=lease_s, node=node.name,
                                 acquisition=self.acquisition)
        body = self.post(op, node, f"/_locks/{key}/_acquire",
                         {"owner": self.owner, "acquisition": self.acquisition, "wait": f"{wait_s}s",
                          "lease": f"{lease_s}s"},
                         self.load.answer_s)
        if body is None:
            return (None if op.type == "info" else False), None
        # The lease as the server reports it (a re-entrant grant keeps the lease it has), left at
        # a server moment after the invocation: invoke + lease_ms is never after its end.
        self.history.ok(op, token=body["fencing_token"], status="200",
                        lease_s=body.get("lease_ms", lease_s * 1000) / 1000,
                        detail="reentrant" if body.get("reentrant") else None)
        return True, body["fencing_token"]

    def release(self, key: str, token: int | None, tries: int = 3, timeout: float | None = None) -> None:
        """Up to `tries` tries, each through a node not tried yet, while the answer is unknown,
        503 or no connection; a 404 (lease expired, or lost in a failover) ends it. Each waits up
        to `timeout` (`admin_s` unless given)."""
        tried = []
        for _ in range(tries):
            node = self.node(avoid=tried)
            tried.append(node)
            op = self.history.invoke(self.name, RELEASE, key=key, owner=self.owner, token=token, node=node.name)
            body = {"owner": self.owner, "acquisition": self.acquisition}
            if token is not None:
                body["fencing_token"] = token
            if self.post(op, node, f"/_locks/{key}/_release", body,
                         self.load.admin_s if timeout is None else timeout) is not None:
                self.history.ok(op, status="200")
                return
            if op.type == "fail" and not op.status.startswith(("503", "not connected")):
                return


class Holder(Worker):
    """One owner holding a random key for `hold_s`, renewing every `renew_every_s` with its token: a holder
    that a failover drops shows as a renewal refused inside its lease, or as an overlap with the
    next owner. A renewal refused 404 ends the hold (the lock is gone); one whose outcome is
    unknown is followed by the next."""

    def __init__(self, index: int, cluster, history: History, stop: threading.Event, load: Load):
        super().__init__(index, cluster, history, stop, load, prefix="h")

    def run(self) -> None:
        while not self.stop.is_set():
            key = self.rng.choice(self.load.keys)
            self.next_owner()
            granted, token = self.acquire(key, self.load.hold_lease_s)
            if granted:
                token = self.hold(key, token, time.monotonic() + self.rng.uniform(*self.load.hold_s))
            if granted or granted is None:
                self.release(key, token)
            if not granted:
                time.sleep(self.rng.uniform(0.05, 0.2))

    def hold(self, key: str, token: int, until: float) -> int:
        """Renews every `renew_every_s` until `until`, or until a renewal says the lock is gone;
        after a renewal, now and then watches its lock (wait 0s) or sends its acquire again
        (wait 0s: a grant that ended comes back under a newer token, held from then on). Returns
        the token it holds last."""
        while time.monotonic() < until and not self.stop.is_set():
            time.sleep(self.load.renew_every_s)
            node = self.node()
            op = self.history.invoke(self.name, RENEW, key=key, owner=self.owner, token=token,
                                     lease_s=self.load.hold_lease_s, node=node.name)
            if self.post(op, node, f"/_locks/{key}/_renew", {"owner": self.owner, "acquisition": self.acquisition, "fencing_token": token,
                                                             "lease": f"{self.load.hold_lease_s}s"}, self.load.admin_s) is not None:
                self.history.ok(op, status="200")
            elif (op.status or "").startswith("404"):
                return token
            check = self.rng.random()
            if check < 0.3:
                watch(self, key, token)
            elif check < 0.5:
                granted, again = self.acquire(key, self.load.hold_lease_s, wait_s=0, again=True)
                token = again if granted else token
        return token


def watch(worker: Worker, key: str, token: int) -> None:
    """A watch of `token` with wait 0s through a random node, recorded as WATCH: [token] shown
    while it holds, [] once it ended."""
    node = worker.node()
    op = worker.history.invoke(worker.name, WATCH, key=key, token=token, node=node.name)
    body = worker.post(op, node, f"/_locks/{key}/_watch?token={token}&wait=0s", None, worker.load.admin_s,
                       method="GET")
    if body is not None:
        worker.history.ok(op, status="200", shown=[] if body.get("changed") else [token])


class Reader(Worker):
    """Reads a random key through a random node every moment (`GET /_locks/{key}`), recorded as
    READ with the tokens of the holders it showed: the checker's stale-read rule
    (history.stale_reads) holds them against the grants and releases around them."""

    def __init__(self, index: int, cluster, history: History, stop: threading.Event, load: Load):
        super().__init__(index, cluster, history, stop, load, prefix="r")

    def run(self) -> None:
        while not self.stop.is_set():
            key = self.rng.choice(self.load.keys)
            node = self.node()
            op = self.history.invoke(self.name, READ, key=key, node=node.name)
            body = self.post(op, node, f"/_locks/{key}", None, self.load.admin_s, method="GET")
            if body is not None:
                self.history.ok(op, status="200", shown=[h["fencing_token"] for h in body.get("holders", [])])
            time.sleep(self.rng.uniform(0.05, 0.3))


class Prober(Worker):
    """Takes a fresh key (never asked for before, so free) through one node every `every_s`, and
    releases it: the next grant after a fault through another node than the one it hit is the
    first moment the locks served a new request again, which a shared key's holds cannot put off
    (issue 47 item 5; docs/RELIABILITY.md "Availability" measures single faults the same way).
    Pinned to its node, so a prober of a frozen node waits alone, its release too: one try through
    its node (a key nobody else asks for loses nothing by a release that does not come, its lease
    runs out), where a worker's three tries of up to `admin_s` each would keep it from probing for
    most of a minute after a fault and hide the fault's stretch from the report."""

    def __init__(self, index: int, cluster, history: History, stop: threading.Event, load: Load,
                 every_s: float = 0.2):
        super().__init__(index, cluster, history, stop, load, prefix="p")
        self.pinned, self.every_s = cluster.nodes[index], every_s

    def node(self, avoid=()):
        return self.pinned

    def release(self, key: str, token: int | None, tries: int = 1, timeout: float | None = None) -> None:
        super().release(key, token, tries, self.load.answer_s if timeout is None else timeout)

    def run(self) -> None:
        while not self.stop.wait(self.every_s):
            self.next_owner()
            key = f"probe-{self.owner}"
            granted, token = self.acquire(key, wait_s=1)
            if granted or granted is None:
                self.release(key, token)
