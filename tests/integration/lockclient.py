"""HTTP helpers for the lock-manager integration tests: one method per REST endpoint (see
docs/API.md), error assertions, bounded polling and a raw-socket request for disconnect tests.

Every method returns the `requests.Response` untouched so a test can assert on the status and
the body; `ok()` asserts a 200 and returns the JSON. One `LockClient` per thread: a
`requests.Session` is not meant to be shared between threads."""

from __future__ import annotations

import hashlib
import json
import re
import socket
import time
import uuid
from urllib.parse import quote, urlsplit

import requests


MAX_ACQUISITION_BYTES = 128  # docs/API.md "Acquisitions"
AGING_MS = 100  # locks.priority.aging of the `aging_node` fixture (tests/conftest.py)


def unique(prefix: str = "k") -> str:
    """A key or owner no other test uses."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def tree_root() -> str:
    """A fresh tree name, so `/<root>/b/c` never collides with another test's tree."""
    return f"t{uuid.uuid4().hex[:10]}"


def enc(key: str) -> str:
    """A key as one URL path segment (`/` becomes `%2F`); lone surrogates (fuzzer) pass through
    as their (invalid) UTF-8 bytes."""
    return quote(key.encode("utf-8", "surrogatepass"), safe="")


def ok(response: requests.Response) -> dict:
    assert response.status_code == 200, f"{response.status_code}: {response.text}"
    return response.json()


def error_of(response: requests.Response) -> dict:
    body = response.json()
    assert isinstance(body, dict) and isinstance(body.get("error"), dict), body
    assert body.get("status") == response.status_code, body
    err = body["error"]
    assert isinstance(err.get("type"), str) and isinstance(err.get("reason"), str), body
    return err


def assert_error(response: requests.Response, status: int, error_type: str, *names: str) -> dict:
    """Asserts Elasticsearch's error JSON with exactly `status` and `error.type` (the one
    docs/API.md names) and every one of `names` somewhere in the body (the field named);
    returns the error object."""
    assert isinstance(status, int) and isinstance(error_type, str), "one status, one error type"
    assert response.status_code == status, f"{response.status_code}: {response.text}"
    err = error_of(response)
    assert err["type"] == error_type, response.text
    for name in names:
        assert name in response.text, f"{name!r} not named in {response.text}"
    return err


_UNITS_MS = {"nanos": 1e-6, "micros": 1e-3, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000,
             "d": 86_400_000}


def duration_ms(value) -> float:
    """An Elasticsearch time value (`"100ms"`, `"1s"`) or a number of milliseconds, in ms."""
    if isinstance(value, (int, float)):
        return float(value)
    m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*(nanos|micros|ms|s|m|h|d)\s*", str(value))
    assert m, f"not a time value: {value!r}"
    return float(m.group(1)) * _UNITS_MS[m.group(2)]


def wait_until(predicate, timeout: float, interval: float = 0.02, message: str = "condition"):
    """Polls `predicate` until it returns something truthy (returned) or `timeout` seconds pass
    (AssertionError). Bounded: never loops forever."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"{message} not reached within {timeout}s (last: {last!r})")
        time.sleep(interval)


class LockClient:
    """JSON over HTTP to one node, one method per lock endpoint."""

    def __init__(self, base_url: str, timeout: float = 60.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.http = requests.Session()

    def close(self) -> None:
        self.http.close()

    # -- plumbing ---------------------------------------------------------------------------

    def call(self, method: str, path: str, body=None, raw: bytes | str | None = None,
             params: dict | None = None, timeout: float | None = None) -> requests.Response:
        headers = {}
        data = None
        if raw is not None:
            data = raw.encode() if isinstance(raw, str) else raw
            headers["Content-Type"] = "application/json"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        return self.http.request(method, self.base_url + path, data=data, headers=headers,
                                 params=params, timeout=timeout or self.timeout)

    @staticmethod
    def _body(owner, fields: dict) -> dict:
        body = {} if owner is None else {"owner": owner}
        body.update({k: v for k, v in fields.items() if v is not None})
        return body

    @staticmethod
    def _named(owner, fields: dict) -> dict:
        """`fields` naming the acquisition `owner` unless they name one (or `acquisition=None`).

        The tests' owners are one acquisition each: acquiring again as the same owner is a
        retry (docs/API.md "Acquisitions"), and release and renew name that acquisition, as the
        REST API requires. A test of the rule itself passes `acquisition=None` to leave it out.
        """
        if "acquisition" not in fields and isinstance(owner, str) and owner:
            named = owner if len(owner.encode()) <= MAX_ACQUISITION_BYTES else hashlib.sha256(owner.encode()).hexdigest()
            return {**fields, "acquisition": named}
        return fields

    # -- single key -------------------------------------------------------------------------

    def acquire(self, key: str, owner: str | None, timeout: float | None = None,
                **fields) -> requests.Response:
        return self.call("POST", f"/_locks/{enc(key)}/_acquire",
                         self._body(owner, self._named(owner, fields)), timeout=timeout)

    def release(self, key: str, owner: str | None, **fields) -> requests.Response:
        return self.call("POST", f"/_locks/{enc(key)}/_release",
                         self._body(owner, self._named(owner, fields)))

    def renew(self, key: str, owner: str | None, **fields) -> requests.Response:
        return self.call("POST", f"/_locks/{enc(key)}/_renew",
                         self._body(owner, self._named(owner, fields)))

    def force_release(self, key: str, **fields) -> requests.Response:
        return self.call("POST", f"/_locks/{enc(key)}/_force_release",
                         {k: v for k, v in fields.items() if v is not None})

    def get(self, key: str, scope: str | None = None) -> requests.Response:
        return self.call("GET", f"/_locks/{enc(key)}", params={"scope": scope} if scope else None)

    def watch(self, key: str, timeout: float | None = None, **params) -> requests.Response:
        """`GET /_locks/{key}/_watch` with `token`, `wait`, `scope`... as query parameters."""
        return self.call("GET", f"/_locks/{enc(key)}/_watch",
                         params={k: v for k, v in params.items() if v is not None}, timeout=timeout)

    def state(self, key: str, scope: str | None = None) -> dict:
        """`GET /_locks/{key}` as JSON (asserting 200)."""
        return ok(self.get(key, scope))

    def holders(self, key: str, scope: str | None = None) -> list[str]:
        return [h["owner"] for h in self.state(key, scope)["holders"]]

    def waiters(self, key: str, scope: str | None = None) -> list[str]:
        return [w["owner"] for w in self.state(key, scope)["waiters"]]

    # -- many keys --------------------------------------------------------------------------

    def multi_acquire(self, owner: str | None, locks, timeout: float | None = None,
                      **fields) -> requests.Response:
        body = self._body(owner, self._named(owner, fields))
        if locks is not None:
            body["locks"] = locks
        return self.call("POST", "/_locks/_acquire", body, timeout=timeout)

    def multi_release(self, owner: str | None, locks=None, all: bool | None = None,
                      **fields) -> requests.Response:
        body = self._body(owner, fields if all else self._named(owner, fields))
        if locks is not None:
            body["locks"] = locks
        if all is not None:
            body["all"] = all
        return self.call("POST", "/_locks/_release", body)

    # -- sessions ---------------------------------------------------------------------------

    def session_create(self, owner: str | None, **fields) -> requests.Response:
        return self.call("POST", "/_locks/_session", self._body(owner, fields))

    def session_keepalive(self, session_id: str, owner: str | None, **fields) -> requests.Response:
        """Keep-alive names the session's owner in the body, as release does (`None`: no body)."""
        body = None if owner is None and not fields else self._body(owner, fields)
        return self.call("POST", f"/_locks/_session/{enc(session_id)}/_keepalive", body)

    def session_delete(self, session_id: str, owner: str | None, **fields) -> requests.Response:
        """Ending a session names its owner in the body (`None`: no body)."""
        body = None if owner is None and not fields else self._body(owner, fields)
        return self.call("DELETE", f"/_locks/_session/{enc(session_id)}", body)

    # -- reading ----------------------------------------------------------------------------

    def list(self, **params) -> requests.Response:
        return self.call("GET", "/_locks", params={k: v for k, v in params.items() if v is not None})

    def cat(self, **params) -> requests.Response:
        return self.call("GET", "/_cat/locks", params=params)

    def stats(self) -> requests.Response:
        return self.call("GET", "/_locks/_stats")

    def diagnostics(self) -> requests.Response:
        return self.call("GET", "/_locks/_node/diagnostics")

    def put_cluster_settings(self, persistent: dict) -> requests.Response:
        return self.call("PUT", "/_cluster/settings", {"persistent": persistent})


def wait_for_waiter(lc: LockClient, key: str, owner: str, timeout: float = 10.0,
                    scope: str | None = None) -> dict:
    """Until `owner` is listed among the key's waiters; returns that waiter entry."""
    def find():
        for w in lc.state(key, scope)["waiters"]:
            if w["owner"] == owner:
                return w
        return None
    return wait_until(find, timeout, message=f"{owner} queued on {key}")


class RawRequest:
    """One HTTP/1.1 request on a plain socket, so a test can hang up while it is pending."""

    def __init__(self, base_url: str, method: str, path: str, body: dict | bytes):
        parts = urlsplit(base_url)
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
        head = (f"{method} {path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
                "Connection: close\r\n\r\n").encode()
        self.sock.sendall(head + payload)

    def response(self, timeout: float = 30.0) -> tuple[int, bytes]:
        """Reads the whole answer (the server closes after it): status and raw body."""
        self.sock.settimeout(timeout)
        chunks = []
        while True:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
        head, _, body = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1]) if head else 0
        return status, body

    def hang_up(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
