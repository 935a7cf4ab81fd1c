"""The contract harness's side of the driver protocol (PROTOCOL.md): a driver process started with
`ESLM_URLS`, commands written as JSON lines, answers read by a thread and matched by `id`, every
wait bounded. A driver that exits, hangs or writes something that is not an answer fails the case
with the tail of its standard error. Also the plain-HTTP helper the cases use to set up, inspect
and force-release on the nodes (`Nodes`), and what a case gets to work with (`Context`).

Nothing here knows a client: the cases (cases.py) speak only the protocol and HTTP."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

import requests

# PROTOCOL.md's error kinds: an answer with another kind is a protocol violation.
KINDS = {"conflict", "wait_timeout", "not_held", "lost", "stale_token", "unavailable", "invalid_argument",
         "closed", "other"}

# How long a command that is not expected to wait may take before the driver counts as hung: a
# round trip or two, on a loaded two-core machine, with a JVM still warming up.
QUICK_S = 30.0


class DriverFailure(AssertionError):
    """The driver crashed, hung or broke the protocol: the case fails with its stderr."""


@dataclasses.dataclass(frozen=True)
class Launch:
    """How to start one client's driver: `argv` run in `cwd` with `env` added to this process's
    environment (ESLM_URLS is set per case)."""

    argv: list[str]
    cwd: Path
    env: dict[str, str] = dataclasses.field(default_factory=dict)


class Pending:
    """A command sent and not necessarily answered yet."""

    def __init__(self, driver: "Driver", id: int, request: dict):
        self.driver = driver
        self.id = id
        self.request = request
        self.sent_at = time.monotonic()

    def done(self) -> bool:
        """Whether its answer has arrived (never waits)."""
        return self.driver._arrived(self.id) is not None

    def answer(self, timeout: float = QUICK_S) -> dict:
        """The answer, waiting at most `timeout` seconds; DriverFailure if the driver exits or
        stays silent that long."""
        return self.driver._await(self, timeout)[0]

    @property
    def elapsed_ms(self) -> float:
        """Milliseconds from sending the command to reading its answer (which must have come)."""
        arrived = self.driver._arrived(self.id)
        assert arrived is not None, f"{self.request['cmd']} #{self.id} is not answered yet"
        return (arrived[1] - self.sent_at) * 1000


class Driver:
    """One driver process: `send` a command (optionally `"async": true`), `call` one and await
    its answer. Answers are read by a thread into a table keyed by id."""

    def __init__(self, name: str, launch: Launch, urls: list[str], stderr_path: Path):
        self.name = name
        self.launch = launch
        self.urls = list(urls)
        self.stderr_path = stderr_path
        self._ids = itertools.count(1)
        self._answers: dict[int, tuple[dict, float]] = {}
        self._garbage: list[str] = []  # lines that were not answers
        self._changed = threading.Condition()
        self._eof = False
        self._write_lock = threading.Lock()
        env = {**os.environ, **launch.env, "ESLM_URLS": ",".join(self.urls)}
        self._stderr = open(stderr_path, "wb")
        try:
            self.process = subprocess.Popen(
                launch.argv, cwd=launch.cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, start_new_session=True)
        except OSError as e:
            self._stderr.close()
            raise DriverFailure(f"{name}: cannot start driver {launch.argv}: {e}") from e
        self._reader = threading.Thread(target=self._read, name=f"driver-{name}-stdout", daemon=True)
        self._reader.start()

    # --- commands -------------------------------------------------------------------------------

    def send(self, cmd: str, *, run_async: bool = False, **args: Any) -> Pending:
        """Writes the command; returns at once. `run_async` sends `"async": true`."""
        id = next(self._ids)
        request = {"id": id, "cmd": cmd, **args}
        if run_async:
            request["async"] = True
        line = (json.dumps(request) + "\n").encode()
        pending = Pending(self, id, request)
        with self._write_lock:
            try:
                self.process.stdin.write(line)
                self.process.stdin.flush()
            except (BrokenPipeError, OSError) as e:
                raise DriverFailure(self._story(f"could not send {request}: {e}")) from e
        return pending

    def call(self, cmd: str, *, timeout: float = QUICK_S, **args: Any) -> dict:
        """Sends a command and awaits its answer (at most `timeout` s)."""
        return self.send(cmd, **args).answer(timeout)

    # --- the process ----------------------------------------------------------------------------

    def pause(self) -> None:
        """SIGSTOP: the client's process frozen as by a long GC pause or a stopped VM."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self, timeout: float = 20.0) -> int | None:
        """Sends `exit` (if it still runs), waits for the process to end (killed after `timeout`),
        and answers its exit code; None when it had to be killed."""
        code: int | None = None
        try:
            if self.process.poll() is None:
                os.kill(self.process.pid, signal.SIGCONT)  # a paused driver could not exit
                try:
                    self.send("exit")
                    self.process.stdin.close()
                except (DriverFailure, OSError):
                    pass
                try:
                    code = self.process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    code = None
            else:
                code = self.process.returncode
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
            self._reader.join(timeout=10)
            self._stderr.close()
        return code

    def stderr_tail(self, lines: int = 60) -> str:
        try:
            text = self.stderr_path.read_text(errors="replace")
        except OSError:
            return "(no stderr)"
        return "\n".join(text.splitlines()[-lines:]) or "(empty)"

    # --- reading --------------------------------------------------------------------------------

    def _read(self) -> None:
        for raw in self.process.stdout:
            line = raw.decode(errors="replace").strip()
            if not line:
                continue
            try:
                answer = json.loads(line)
            except ValueError:
                answer = None
            with self._changed:
                if isinstance(answer, dict) and isinstance(answer.get("id"), int):
                    self._answers[answer["id"]] = (answer, time.monotonic())
                else:
                    self._garbage.append(line)
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    def _arrived(self, id: int) -> tuple[dict, float] | None:
        with self._changed:
            return self._answers.get(id)

    def _await(self, pending: Pending, timeout: float) -> tuple[dict, float]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while pending.id not in self._answers and not self._eof and not self._garbage:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            found = self._answers.get(pending.id)
            garbage = list(self._garbage)
        if garbage:
            raise DriverFailure(self._story(f"wrote lines that are not answers: {garbage[:5]}"))
        if found is None:
            if self._eof:
                try:
                    code = self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    code = "(still running, stdout closed)"
                raise DriverFailure(self._story(
                    f"exited with {code} before answering {pending.request}"))
            raise DriverFailure(self._story(
                f"no answer to {pending.request} within {timeout:.0f} s (the driver hangs)"))
        check_answer(found[0], pending.request, self._story)
        return found

    def _story(self, what: str) -> str:
        return f"driver {self.name} ({' '.join(map(str, self.launch.argv))}) {what}\n" \
               f"--- its stderr ({self.stderr_path}) ---\n{self.stderr_tail()}"


def check_answer(answer: dict, request: dict, story: Callable[[str], str]) -> None:
    """An answer of PROTOCOL.md's shape: ok true, or ok false with a known error kind."""
    if answer.get("ok") is True:
        return
    error = answer.get("error")
    if answer.get("ok") is False and isinstance(error, dict) and error.get("kind") in KINDS:
        return
    raise DriverFailure(story(f"answered {request} with {answer}, which is not a protocol answer"))


# --- the nodes over plain HTTP -------------------------------------------------------------------

class Nodes:
    """Plain HTTP to the cluster's nodes for set-up and inspection: each call goes to the first
    node that answers (a node being restarted is not among `urls`). Every call is bounded."""

    def __init__(self, urls: list[str], timeout: float = 30.0):
        self.urls = list(urls)
        self.timeout = timeout
        self.http = requests.Session()

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, body: Any = None, *, via: str | None = None,
                timeout: float | None = None) -> requests.Response:
        last: Exception | None = None
        for url in [via] if via else self.urls:
            try:
                return self.http.request(method, url + path, json=body, timeout=timeout or self.timeout)
            except requests.ConnectionError as e:
                last = e
        raise AssertionError(f"{method} {path}: no node answered ({last})")

    def until_served(self, method: str, path: str, body: Any = None, within_s: float = 60.0) -> requests.Response:
        """The request, sent again through the nodes while it answers 503 or gets no answer
        (a partition failing over), until another answer or `within_s` seconds."""
        deadline = time.monotonic() + within_s
        last = None
        while True:
            for url in self.urls:
                try:
                    r = self.http.request(method, url + path, json=body, timeout=self.timeout)
                    if r.status_code != 503:
                        return r
                    last = f"503 {r.text[:300]}"
                except requests.RequestException as e:
                    last = str(e)
            if time.monotonic() >= deadline:
                raise AssertionError(f"{method} {path} still unanswered after {within_s} s: {last}")
            time.sleep(0.1)

    # --- locks ----------------------------------------------------------------------------------

    def state(self, key: str) -> dict:
        r = self.request("GET", f"/_locks/{enc(key)}")
        assert r.status_code == 200, r.text
        return r.json()

    def holders(self, key: str) -> list[tuple[str, int]]:
        """(owner, fencing token) of each holder of `key`, as the server has them now."""
        return [(h["owner"], h["fencing_token"]) for h in self.state(key)["holders"] if not h.get("intention")]

    def tokens(self, key: str) -> list[int]:
        return [t for _, t in self.holders(key)]

    def waiters(self, key: str) -> list[str]:
        return [w["owner"] for w in self.state(key)["waiters"]]

    def take(self, key: str, owner: str, **body: Any) -> int:
        """Acquires `key` for `owner` (its own acquisition) over HTTP; must be granted. The token."""
        r = self.request("POST", f"/_locks/{enc(key)}/_acquire", {"owner": owner, "acquisition": owner, **body})
        assert r.status_code == 200, f"HTTP acquire of {key} for {owner}: {r.status_code} {r.text}"
        return r.json()["fencing_token"]

    def release(self, key: str, owner: str) -> None:
        r = self.request("POST", f"/_locks/{enc(key)}/_release", {"owner": owner, "acquisition": owner})
        assert r.status_code in (200, 404), f"HTTP release of {key} for {owner}: {r.status_code} {r.text}"

    def force_release(self, key: str) -> dict:
        r = self.request("POST", f"/_locks/{enc(key)}/_force_release", {"reason": "contract case"})
        assert r.status_code == 200, f"force-release of {key}: {r.status_code} {r.text}"
        return r.json()

    def await_holders(self, key: str, predicate: Callable[[list[tuple[str, int]]], bool], within_s: float,
                      what: str) -> list[tuple[str, int]]:
        """Polls `GET /_locks/{key}` until its holders satisfy `predicate` (answered), at most
        `within_s` seconds (AssertionError naming `what`)."""
        return poll(lambda: (lambda h: h if predicate(h) else None)(self.holders(key)), within_s, what)

    def await_free(self, key: str, within_s: float) -> None:
        poll(lambda: self.holders(key) == [] or None, within_s, f"{key} free on the server")

    def await_waiters(self, key: str, count: int, within_s: float) -> list[str]:
        return poll(lambda: (lambda w: w if len(w) >= count else None)(self.waiters(key)), within_s,
                    f"{count} waiter(s) queued on {key}")

    # --- documents ------------------------------------------------------------------------------

    def document(self, index: str, doc_id: str) -> dict:
        r = self.request("GET", f"/{index}/_doc/{doc_id}")
        assert r.status_code == 200, f"GET {index}/_doc/{doc_id}: {r.status_code} {r.text}"
        return r.json()

    def delete_index(self, index: str) -> None:
        self.request("DELETE", f"/{index}")


def enc(key: str) -> str:
    return requests.utils.quote(key, safe="")


def poll(probe: Callable[[], Any], within_s: float, what: str, interval: float = 0.05) -> Any:
    """`probe()` until it answers something truthy (returned), at most `within_s` seconds."""
    deadline = time.monotonic() + within_s
    last = None
    while True:
        try:
            last = probe()
        except AssertionError as e:  # a node busy failing over: look again
            last = e
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not reached within {within_s} s (last: {last!r})")
        time.sleep(interval)


# --- what a case works with -----------------------------------------------------------------------

@dataclasses.dataclass
class Context:
    """One case run against one driver: the driver process, the nodes over HTTP, fresh names, and
    (for the cases that break a node) the cluster's controls."""

    driver: Driver
    nodes: Nodes
    driver_name: str
    case_name: str
    cluster: Any = None  # test_contract.ClusterControl: kill, restart, find owners
    tag: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex[:8])

    def key(self, name: str = "k") -> str:
        """A key of this run of this case alone."""
        return f"contract-{self.driver_name}-{self.case_name}-{name}-{self.tag}"

    def owner(self, name: str) -> str:
        """An owner for a holder the harness plays over HTTP."""
        return f"contract-http-{name}-{self.tag}"

    def index(self) -> str:
        return f"contract-{self.driver_name}-{self.case_name}-{self.tag}".lower().replace("_", "-")
