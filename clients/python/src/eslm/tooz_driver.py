"""A tooz driver (OpenStack's coordination API) over the lock manager: locks (exclusive and shared),
groups with capabilities, heartbeats, join/leave watchers and leader election, selected by URL:

    coordinator = tooz.coordination.get_coordinator(
        "elasticsearch+locks://user:secret@es-1:9200?timeout=30&tls=true&ca_certs=/etc/ca.pem", b"worker-1")

Installed with the client (`pip install elasticsearch-lock-manager[tooz]`), registered under
tooz's `tooz.backends` entry point. What each call is on the server (docs/API.md "Groups",
"Elections"; clients/python/README.md "tooz"):

- a group is a group of the plugin, a member a shared lock of scope `group` under a lease of
  `timeout` seconds that `heartbeat()` renews: a member whose process stops beating leaves by
  itself within `timeout`, as with tooz's Redis and etcd drivers;
- a lock is a lock of the plugin (`get_lock(name)`: the key `name`), each acquire under an owner
  of its own, renewed by the client's watchdog while held;
- the leader of a group is the holder of the plugin's election of the same name, campaigned for
  by `run_watchers()` for every group with a `watch_elected_as_leader` callback and renewed by
  `heartbeat()`.

Member and group ids are tooz's bytes (UTF-8 names on the server). Capabilities are kept as
JSON; bytes (tooz's default, and anything not JSON) as `{"$bytes": <base64>}`."""

from __future__ import annotations

import base64
import contextlib
import threading
import uuid
from concurrent import futures
from typing import Any, Iterator

import tooz
from tooz import coordination, locking

from . import Locks, steps
from .errors import (GroupAlreadyExists, GroupNotEmpty, GroupNotFound, LockConflict, LockConnectionError,
                     LockError, LockLost, LockNotHeld, LockWaitTimeout, MemberAlreadyJoined)
from .groups import group_path
from .options import ELECTION, path_of

DEFAULT_TIMEOUT_S = 30


def _name(id_: bytes | str) -> str:
    return id_.decode("utf-8") if isinstance(id_, bytes) else str(id_)


def _id(name: str) -> bytes:
    return name.encode("utf-8")


def _to_json(capabilities: Any) -> Any:
    """Capabilities as the JSON the server keeps: None for none (tooz's default is b"")."""
    if capabilities in (None, b""):
        return None
    if isinstance(capabilities, bytes):
        return {"$bytes": base64.b64encode(capabilities).decode("ascii")}
    return capabilities


def _from_json(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$bytes"}:
        return base64.b64decode(value["$bytes"])
    return value


def _option(options: dict, name: str, default: str | None = None) -> str | None:
    values = options.get(name)
    return values[-1] if values else default


@contextlib.contextmanager
def _translated(group: bytes | None = None, member: bytes | None = None) -> Iterator[None]:
    """The client's errors as tooz's."""
    try:
        yield
    except GroupNotFound as e:
        raise coordination.GroupNotCreated(group or b"") from e
    except GroupAlreadyExists as e:
        raise coordination.GroupAlreadyExist(group or b"") from e
    except GroupNotEmpty as e:
        raise coordination.GroupNotEmpty(group or b"") from e
    except MemberAlreadyJoined as e:
        raise coordination.MemberAlreadyExist(group or b"", member or b"") from e
    except LockNotHeld as e:
        raise coordination.MemberNotJoined(group or b"", member or b"") from e
    except LockConnectionError as e:
        raise coordination.ToozConnectionError(str(e)) from e
    except LockError as e:
        raise tooz.ToozError(str(e)) from e


def _result(fn, *args) -> coordination.CoordinatorResult:
    """Runs `fn` now and hands its answer or its error to `get()`, as tooz's drivers answer."""
    fut: futures.Future = futures.Future()
    try:
        fut.set_result(fn(*args))
    except Exception as e:  # noqa: BLE001 - raised again by get()
        fut.set_exception(e)
    return coordination.CoordinatorResult(fut)


class ElasticsearchLock(locking.Lock):
    """A tooz lock: each `acquire` is a grant under an owner of its own (so two lock objects of
    one name exclude each other, and a shared lock acquired twice holds two shares), renewed by
    the client's watchdog; `release` lets go of the latest and answers False when none is held
    or the server no longer had it."""

    def __init__(self, name: bytes, driver: "ElasticsearchLocksDriver"):
        super().__init__(name)
        self._driver = driver
        self._key = _name(name)
        self._held: list = []
        self._guard = threading.Lock()

    def acquire(self, blocking: bool | float = True, shared: bool = False, timeout: float | None = None) -> bool:
        options: dict[str, Any] = {"mode": "shared" if shared else "exclusive",
                                   "lease": self._driver.timeout_s}
        if blocking is False:
            options["blocking"] = False
        elif timeout is not None:
            options["timeout"] = timeout
        elif blocking is not True:
            options["timeout"] = blocking  # tooz: a number is a timeout in seconds
        try:
            held = self._driver.locks.acquire(self._key, **options)
        except (LockConflict, LockWaitTimeout):
            return False
        with self._guard:
            self._held.append(held)
        return True

    def release(self) -> bool:
        with self._guard:
            if not self._held:
                return False
            held = self._held.pop()
        try:
            held.release()
            return True
        except (LockLost, LockNotHeld):
            return False

    def break_(self) -> bool:
        try:
            self._driver.locks.force_release(self._key, reason="tooz: lock broken")
            return True
        except LockNotHeld:
            return False

    def heartbeat(self) -> bool:
        """Renews what this lock holds (the watchdog does too); False when it holds nothing."""
        with self._guard:
            held = list(self._held)
        for h in held:
            with contextlib.suppress(LockLost, LockNotHeld):
                h.renew()
        return bool(held)

    def is_still_owner(self) -> bool:
        with self._guard:
            return any(not h.lost for h in self._held)


class ElasticsearchLocksDriver(coordination.CoordinationDriverCachedRunWatchers):
    """The tooz driver (see the module docs). Options of the URL's query: `timeout` (seconds, the
    lease of memberships, leaderships and locks; default 30), `tls` (`true`: HTTPS), `ca_certs`,
    `verify_certs` (`false` to skip), `api_key`; credentials as the URL's user and password."""

    CHARACTERISTICS = (
        coordination.Characteristics.DISTRIBUTED_ACROSS_THREADS,
        coordination.Characteristics.DISTRIBUTED_ACROSS_PROCESSES,
        coordination.Characteristics.DISTRIBUTED_ACROSS_HOSTS,
    )

    def __init__(self, member_id: bytes, parsed_url: Any, options: dict[str, Any]):
        super().__init__(member_id, parsed_url, options)
        self.timeout_s = float(_option(options, "timeout", str(DEFAULT_TIMEOUT_S)))
        self._member = _name(member_id)
        self._url = parsed_url
        self._options = options
        self._es: Any = None
        self.locks: Locks = None  # type: ignore[assignment]
        self._leading: dict[bytes, int] = {}  # group -> term of this coordinator's leadership
        self._memberships: dict[bytes, int] = {}  # group -> fencing token of this member
        self._instance = ""

    # -- connection ------------------------------------------------------------------------

    def _start(self) -> None:
        from elasticsearch import Elasticsearch

        url = self._url
        scheme = "https" if _option(self._options, "tls", "false").lower() == "true" else "http"
        settings: dict[str, Any] = {"request_timeout": max(30.0, self.timeout_s)}
        if url.username:
            settings["basic_auth"] = (url.username, url.password or "")
        if _option(self._options, "api_key"):
            settings["api_key"] = _option(self._options, "api_key")
        if _option(self._options, "ca_certs"):
            settings["ca_certs"] = _option(self._options, "ca_certs")
        if _option(self._options, "verify_certs", "true").lower() == "false":
            settings["verify_certs"] = False
        self._es = Elasticsearch(f"{scheme}://{url.hostname}:{url.port or 9200}", **settings)
        self.locks = Locks(self._es, retry_for="5s")
        # An instance of its own per start: a second coordinator of the same member id is
        # refused as tooz expects (MemberAlreadyExist), while a retried join of this one is not.
        self._instance = uuid.uuid4().hex
        self._leading.clear()
        self._memberships.clear()
        try:
            with _translated():
                self.locks.groups()
        except Exception:
            self._close_client()
            raise

    def _stop(self) -> None:
        for group, term in list(self._leading.items()):
            with contextlib.suppress(LockError):
                self._resign(group, term)
        self._leading.clear()
        self._close_client()

    def _close_client(self) -> None:
        if self.locks is not None:
            self.locks.close()
        if self._es is not None:
            self._es.close()

    def heartbeat(self) -> float:
        """Renews this member's memberships and leaderships; answers when to beat again."""
        for group in list(self._memberships):
            try:
                self.locks.heartbeat_group(_name(group), self._member, acquisition=self._instance,
                                           lease=self.timeout_s)
            except (LockNotHeld, GroupNotFound):
                self._memberships.pop(group, None)  # booted out, or its lease ran out
        for group, term in list(self._leading.items()):
            try:
                self.locks.run(self._renew_steps(group, term))
            except LockNotHeld:
                self._leading.pop(group, None)
        return self.timeout_s / 3

    # -- groups ----------------------------------------------------------------------------

    def create_group(self, group_id: bytes) -> coordination.CoordAsyncResult[None]:
        def create() -> None:
            with _translated(group_id):
                self.locks.create_group(_name(group_id))
        return _result(create)

    def get_groups(self) -> coordination.CoordAsyncResult[list[bytes]]:
        def groups() -> list[bytes]:
            with _translated():
                return [_id(g) for g in self.locks.groups()["groups"]]
        return _result(groups)

    def join_group(self, group_id: bytes, capabilities: Any = b"") -> coordination.CoordAsyncResult[None]:
        def join() -> None:
            with _translated(group_id, self._member_id):
                granted = self.locks.join_group(_name(group_id), self._member, capabilities=_to_json(capabilities),
                                                acquisition=self._instance, lease=self.timeout_s)
            self._memberships[group_id] = granted["fencing_token"]
            self._joined_groups.add(group_id)
        return _result(join)

    def leave_group(self, group_id: bytes) -> coordination.CoordAsyncResult[None]:
        def leave() -> None:
            # The member id is the identity in tooz: whichever coordinator of this member joined,
            # its membership (named by its token, so a newer one is never ended) is left.
            member = self._member_entry(group_id, self._member_id)
            with _translated(group_id, self._member_id):
                self.locks.run(self._leave_steps(group_id, member["fencing_token"]))
            self._memberships.pop(group_id, None)
            self._joined_groups.discard(group_id)
        return _result(leave)

    def delete_group(self, group_id: bytes) -> coordination.CoordAsyncResult[None]:
        def delete() -> None:
            with _translated(group_id):
                self.locks.delete_group(_name(group_id))
        return _result(delete)

    def get_members(self, group_id: bytes) -> coordination.CoordAsyncResult[set[bytes]]:
        return _result(lambda: {_id(m["member"]) for m in self._members(group_id)})

    def get_member_capabilities(self, group_id: bytes, member_id: bytes) -> coordination.CoordAsyncResult[Any]:
        return _result(lambda: _from_json(self._member_entry(group_id, member_id)["capabilities"]))

    def get_member_info(self, group_id: bytes, member_id: bytes) -> coordination.CoordAsyncResult[dict]:
        def info() -> dict:
            m = self._member_entry(group_id, member_id)
            return {"capabilities": _from_json(m["capabilities"]), "fencing_token": m["fencing_token"],
                    "lease_ms": m["lease_ms"]}
        return _result(info)

    def get_members_with_capabilities(self, group_id: bytes) -> coordination.CoordAsyncResult[dict]:
        return _result(lambda: {_id(m["member"]): _from_json(m["capabilities"]) for m in self._members(group_id)})

    def update_capabilities(self, group_id: bytes, capabilities: Any) -> coordination.CoordAsyncResult[None]:
        def update() -> None:
            with _translated(group_id, self._member_id):
                self.locks.update_member(_name(group_id), self._member, _to_json(capabilities))
        return _result(update)

    def _members(self, group_id: bytes) -> list[dict]:
        with _translated(group_id):
            return self.locks.group(_name(group_id))["members"]

    def _member_entry(self, group_id: bytes, member_id: bytes) -> dict:
        for m in self._members(group_id):
            if m["member"] == _name(member_id):
                return m
        raise coordination.MemberNotJoined(group_id, member_id)

    def _leave_steps(self, group_id: bytes, token: int):
        body = {"member": self._member, "fencing_token": token}
        return steps.simple("POST", group_path(_name(group_id), "leave"), body, self.locks.retry_for_ms / 1000)

    # -- leaders ---------------------------------------------------------------------------

    def run_watchers(self, timeout: float | None = None) -> list[Any]:
        result = super().run_watchers(timeout)
        result.extend(self.run_elect_coordinator())
        return result

    def run_elect_coordinator(self) -> list[Any]:  # type: ignore[override]
        """Campaigns (without waiting) in every group with an elected-as-leader callback that
        this coordinator does not lead; runs the callbacks of each group it is elected in."""
        results: list[Any] = []
        for group, hooks in list(self._hooks_elected_leader.items()):
            if group in self._leading:
                continue
            try:
                won = self.locks.run(self._campaign_steps(group))
            except LockConflict:
                continue
            self._leading[group] = won["term"]
            results.extend(hooks.run(coordination.LeaderElected(group, self._member_id)))
        return results

    def get_leader(self, group_id: bytes) -> coordination.CoordAsyncResult[bytes | None]:
        def leader() -> bytes | None:
            self._members(group_id)  # GroupNotCreated for a group that does not exist
            with _translated(group_id):
                state = self.locks.election(_name(group_id))
            return None if state["leader"] is None else _id(state["leader"])
        return _result(leader)

    def stand_down_group_leader(self, group_id: bytes) -> bool:
        term = self._leading.pop(group_id, None)
        if term is None:
            return False
        with contextlib.suppress(LockNotHeld):
            self._resign(group_id, term)
        return True

    def _campaign_steps(self, group: bytes):
        body = {"candidate": self._member, "acquisition": self._instance, "wait": 0,
                "lease": f"{int(self.timeout_s * 1000)}ms"}
        return steps.simple("POST", path_of(_name(group), "/_acquire", ELECTION), body,
                            self.locks.retry_for_ms / 1000)

    def _renew_steps(self, group: bytes, term: int):
        body = {"candidate": self._member, "term": term, "lease": f"{int(self.timeout_s * 1000)}ms"}
        return steps.simple("POST", path_of(_name(group), "/_renew", ELECTION), body,
                            self.locks.retry_for_ms / 1000)

    def _resign(self, group: bytes, term: int) -> None:
        body = {"candidate": self._member, "term": term}
        self.locks.run(steps.simple("POST", path_of(_name(group), "/_release", ELECTION), body,
                                    self.locks.retry_for_ms / 1000))

    # -- locks -----------------------------------------------------------------------------

    def get_lock(self, name: bytes) -> ElasticsearchLock:
        return ElasticsearchLock(name, self)
