"""The client's logic without its I/O, shared by the sync and the asyncio API.

An operation is a generator that yields *effects* — a `Call` (one HTTP request) or a `Sleep` —
and gets back the answer body (or has the error thrown into it). `Locks` runs operations with
blocking calls, `AsyncLocks` with awaited ones; retries, budgets and the reading of answers are
written once, here and in the handle and session modules."""

from __future__ import annotations

import logging
import math
import random
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Generator

from elasticsearch import ApiError, TransportError

from . import errors
from .durations import to_millis
from .options import watch_path

log = logging.getLogger("eslm")

# The content type of every body; the official client turns it into its compatibility media
# type (`application/vnd.elasticsearch+json; compatible-with=9`), which the lock endpoints take.
HEADERS = {"accept": "application/json", "content-type": "application/json"}
# A `_bulk` body: a list of JSON lines, which the official client writes as NDJSON (and turns
# into `application/vnd.elasticsearch+x-ndjson; compatible-with=N`, as its own `bulk` does).
NDJSON_HEADERS = {"accept": "application/json", "content-type": "application/x-ndjson"}

# An HTTP request that queues on the server (an acquire with a `wait`) may last that long: its
# read timeout is the wait plus this margin, whatever the client's default is.
WAIT_MARGIN_S = 30.0

# 503 backoff: 50 ms doubling to 1 s, each delay drawn from its upper half (jitter).
BACKOFF_FIRST_S = 0.05
BACKOFF_MAX_S = 1.0


@dataclass(frozen=True)
class Call:
    """One request through the user's client's `perform_request`."""

    method: str
    path: str
    body: Any = None
    timeout: float | None = None  # seconds; None: the client's own request timeout
    headers: dict | None = None  # None: JSON (`HEADERS`)

    def send(self, es):
        """Sends it through `es.perform_request` (a coroutine for an `AsyncElasticsearch`); with
        a `timeout`, through a view of `es` with that request timeout (same transport, auth and
        node pool)."""
        client = es if self.timeout is None else es.options(request_timeout=self.timeout)
        return client.perform_request(self.method, self.path, body=self.body, headers=self.headers or HEADERS)


@dataclass(frozen=True)
class Sleep:
    seconds: float


Steps = Generator[Any, Any, Any]


class Stepper:
    """Drives one operation: `effect` is what it waits for, `settle` hands it the outcome; once
    `done`, `value` is what it returned."""

    def __init__(self, steps: Steps):
        self._steps = steps
        self.done = False
        self.value = None
        self.effect = None
        self._advance(steps.send, None)

    def settle(self, reply: Any, error: BaseException | None) -> None:
        if error is None:
            self._advance(self._steps.send, reply)
        else:
            self._advance(self._steps.throw, error)

    def _advance(self, resume: Callable, arg: Any) -> None:
        try:
            self.effect = resume(arg)
        except StopIteration as stop:
            self.done, self.value = True, stop.value


class Outcome:
    """`with Outcome() as out: out.reply = ...`: the reply, or in `error` the lock or transport
    error that was raised, as the package's exception (an error answer of the official client
    becomes the class for its `error.type`, a transport failure `LockConnectionError`, the
    official client's error chained as `__cause__`), for `Stepper.settle(out.reply, out.error)`."""

    def __init__(self):
        self.reply: Any = None
        self.error: BaseException | None = None

    def __enter__(self) -> "Outcome":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if isinstance(exc, ApiError):
            self.error = errors.from_response(exc.meta.status, exc.body)
        elif isinstance(exc, TransportError):
            self.error = errors.from_transport(exc)
        elif isinstance(exc, errors.LockError):
            self.error = exc
        return self.error is not None


def seconds_left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def millis_left(deadline: float) -> int:
    return int(seconds_left(deadline) * 1000)


def backoff(attempt: int) -> float:
    cap = min(BACKOFF_MAX_S, BACKOFF_FIRST_S * (2 ** attempt))
    return random.uniform(cap / 2, cap)


def retrying(make_call: Callable[[float], Call], deadline: float) -> Steps:
    """Sends `make_call(deadline)` until it is answered. A 503 (partition moving, in recovery
    or unconfirmed: docs/API.md "Errors") is retried after a growing backoff while the next
    attempt still starts before `deadline`; after that the 503 is raised. The caller's budget
    is never exceeded: a call that queues gets only what is left of it (see `acquire`)."""
    attempt = 0
    while True:
        call = make_call(deadline)
        try:
            return (yield call)
        except errors.Unavailable as e:
            delay = backoff(attempt)
            if time.monotonic() + delay >= deadline:
                raise
            log.info("%s %s answered 503 %s; retry %d in %.0f ms", call.method, call.path, e.type,
                     attempt + 1, delay * 1000)
            attempt += 1
            yield Sleep(delay)


def simple(method: str, path: str, body: Any, budget_s: float) -> Steps:
    """One call retried on 503 for at most `budget_s` seconds."""
    call = Call(method, path, body)
    return retrying(lambda _deadline: call, time.monotonic() + budget_s)


# The longest wait one acquire request may ask for: the server's `locks.wait.max` (5 minutes
# unless an operator changed it). A longer wait, or one until granted, is sent as several
# requests, each re-sent with the time left; a cluster with a lower maximum names it in the
# 400 that refuses a longer wait, and the client re-sends within it (clients/python/README.md
# "Waiting").
SERVER_WAIT_MAX_MS = 300_000
_WAIT_MAX = re.compile(r"\[wait\] must be at most \[([^\]]+)\] \(locks\.wait\.max\)")


def acquire(owner: str, options) -> Steps:
    """Acquires what `options` (an `options.LockOptions`) asks for and returns the answer,
    waiting at most `options.wait_ms` (None: until granted). Each request queues on the server
    for at most `locks.wait.max`; when that runs out with time left, the acquire is sent again
    (under the same acquisition) with what is left. Retries after a 503 queue for what is left
    too, so the whole acquire never takes longer than asked (plus the round trips)."""
    forever = options.wait_ms is None
    deadline = math.inf if forever else time.monotonic() + options.wait_ms / 1000
    cap_ms = SERVER_WAIT_MAX_MS

    def make_call(request_deadline: float) -> Call:
        left = millis_left(request_deadline)
        timeout = left / 1000 + WAIT_MARGIN_S if left else None
        return Call("POST", options.path(), options.body(owner, left), timeout)

    while True:
        try:
            return (yield from retrying(make_call, min(deadline, time.monotonic() + cap_ms / 1000)))
        except errors.LockWaitTimeout:
            if seconds_left(deadline) <= 0:
                raise
            log.debug("acquire of %s: the server's wait ran out, sending it again", options.path())
        except errors.IllegalArgument as e:
            lower = wait_max_ms(e)
            if lower is None or lower >= cap_ms:
                raise
            cap_ms = lower


def wait_max_ms(refusal: errors.IllegalArgument) -> int | None:
    """The cluster's `locks.wait.max` named in the 400 that refused a longer wait, else None."""
    found = _WAIT_MAX.search(refusal.reason)
    return to_millis(found.group(1), "locks.wait.max") if found else None


def watch(key: str, token: int, wait_ms: int, scope: str, revoke: bool = False) -> Steps:
    """`GET /_locks/{key}/_watch` (for an election, `GET /_elections/{name}/_observe` of term
    `token`): answers when the grant with `token` ends (`changed`, with a lock's `reason`) or
    after `wait_ms` with `changed: false`. The request's read timeout is the wait plus the
    margin; a 503 is retried within the wait."""
    def make_call(deadline: float) -> Call:
        left = millis_left(deadline)
        return Call("GET", watch_path(key, token, left, scope, revoke), None, left / 1000 + WAIT_MARGIN_S)

    return retrying(make_call, time.monotonic() + wait_ms / 1000)
