"""Groups (docs/API.md "Groups"): named sets of live members with capabilities, for group
membership as tooz, ZooKeeper and etcd recipes offer it. One mixin serves `Locks` and
`AsyncLocks`: each method builds the operation's steps (eslm/steps.py) and hands them to the
client's `run`, which blocks for `Locks` and is awaited for `AsyncLocks`.

A member is a lock of scope `group` on the server: it holds its membership under a lease (renew
it with `heartbeat_group`) or a session, and leaves by itself when that ends."""

from __future__ import annotations

import time
from typing import Any, Callable
from urllib.parse import quote

from . import steps
from .durations import Duration, to_millis
from .errors import InvalidArgument
from .options import check_name


def group_path(name: str, action: str = "") -> str:
    """`/_groups/{name}` with the name as one URL path segment, then `/_<action>`."""
    return f"/_groups/{quote(check_name(name, 'group'), safe='')}" + (f"/_{action}" if action else "")


def observe_steps(name: str, version: int, wait: Duration) -> steps.Steps:
    """`GET /_groups/{name}/_observe`: the group as soon as its version is not `version`."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise InvalidArgument(f"[version] must be a group's version (a whole number, 0 for none), got [{version!r}]")
    wait_ms = to_millis(wait, "wait")
    path = group_path(name, "observe")

    def make_call(deadline: float) -> steps.Call:
        left = steps.millis_left(deadline)
        return steps.Call("GET", f"{path}?version={version}&wait={left}ms", None, left / 1000 + steps.WAIT_MARGIN_S)

    return steps.retrying(make_call, time.monotonic() + wait_ms / 1000)


class GroupApi:
    """Group calls of a client (`retry_for_ms` bounds the 503 retries of all but `observe_group`,
    which retries within its wait)."""

    retry_for_ms: int
    run: Callable[..., Any]  # the client's: blocking (`Locks`) or a coroutine (`AsyncLocks`)

    def _group_call(self, method: str, name: str, action: str = "", body: Any = None) -> Any:
        return self.run(steps.simple(method, group_path(name, action), body, self.retry_for_ms / 1000))

    def create_group(self, name: str) -> Any:
        """Creates group `name` (`PUT /_groups/{name}`); `GroupAlreadyExists` when it exists."""
        return self._group_call("PUT", name)

    def delete_group(self, name: str) -> Any:
        """Deletes group `name`, which must have no member (`GroupNotEmpty` otherwise)."""
        return self._group_call("DELETE", name)

    def groups(self) -> Any:
        """`GET /_groups`: `{"groups": [names]}` of the whole cluster."""
        return self.run(steps.simple("GET", "/_groups", None, self.retry_for_ms / 1000))

    def group(self, name: str) -> Any:
        """`GET /_groups/{name}`: `members` (member, capabilities, fencing_token, lease_ms,
        session) in name order, and the group's `version`."""
        return self._group_call("GET", name)

    def join_group(self, name: str, member: str, *, capabilities: Any = None, acquisition: str | None = None,
                   lease: Duration | None = None, session: str | None = None) -> Any:
        """Joins group `name` as `member` with `capabilities` (any JSON value, at most 1024
        bytes as JSON) under a lease (default the server's, 30 s) or `session`. `acquisition`
        names this membership (default: the member's name), so a retried join gets it back and
        `leave_group` and `heartbeat_group` name it. Answers the grant (`fencing_token`,
        `lease_ms`, `capabilities`)."""
        body: dict[str, Any] = {"member": check_name(member, "member"),
                                "acquisition": acquisition or member}
        if capabilities is not None:
            body["capabilities"] = capabilities
        if lease is not None:
            body["lease"] = f"{to_millis(lease, 'lease')}ms"
        if session is not None:
            body["session"] = session
        return self._group_call("POST", name, "join", body)

    def leave_group(self, name: str, member: str, *, acquisition: str | None = None) -> Any:
        """Leaves group `name` (`LockNotHeld` when `member` is not in it)."""
        return self._group_call("POST", name, "leave", {"member": member, "acquisition": acquisition or member})

    def heartbeat_group(self, name: str, member: str, *, acquisition: str | None = None,
                        lease: Duration | None = None) -> Any:
        """Renews `member`'s lease in group `name` (for `lease`, default the server's)."""
        body: dict[str, Any] = {"member": member, "acquisition": acquisition or member}
        if lease is not None:
            body["lease"] = f"{to_millis(lease, 'lease')}ms"
        return self._group_call("POST", name, "heartbeat", body)

    def update_member(self, name: str, member: str, capabilities: Any) -> Any:
        """Replaces `member`'s capabilities in group `name` (None: none)."""
        body: dict[str, Any] = {"member": member}
        if capabilities is not None:
            body["capabilities"] = capabilities
        return self._group_call("POST", name, "update", body)

    def observe_group(self, name: str, version: int = 0, wait: Duration = "30s") -> Any:
        """Waits at most `wait` until group `name` is not at `version` (0: none known): the
        group with `changed` True, or `changed` False when the wait ran out."""
        return self.run(observe_steps(name, version, wait))
