"""What a lock request asks for, checked before it is sent (docs/API.md "Conventions": keys and
owners, modes, scopes, priorities), and the request bodies built from it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, Mapping, TypedDict, Union
from urllib.parse import quote

from .durations import Duration, optional_millis
from .errors import InvalidArgument

MODES = ("exclusive", "shared")
SCOPES = ("key", "tree")
SEMAPHORE = "semaphore"  # the scope of a semaphore's grant (docs/API.md "Semaphores")
ELECTION = "election"  # the scope of a leadership (docs/API.md "Elections")
MAX_ELECTION_VALUE_BYTES = 1024
# The path of each scope's endpoints, and the election's names for a lock's actions (a campaign
# is an acquire, a resignation a release: docs/API.md "Elections").
BASE_PATHS = {SEMAPHORE: "/_semaphores/", ELECTION: "/_elections/"}
ELECTION_ACTIONS = {"/_acquire": "/_campaign", "/_release": "/_resign"}
MAX_SEMAPHORE_LIMIT = 65535
PRIORITY_NAMES = ("background", "foreground")
MAX_NAME_BYTES = 512  # keys and owners: 1 to 512 bytes of UTF-8

Priority = Union[int, str]


class AcquireArgs(TypedDict, total=False):
    """The keyword arguments every acquire takes (`lock`, `acquire`, `try_lock`, `lock_many`,
    `semaphore`), so that editors and type checkers show and check them (py.typed).

    Waiting, as in redis-py and kazoo: an acquire waits until granted by default;
    `blocking=False` tries once (busy: `LockConflict`, or None from `try_lock`); `timeout` (a
    duration: "30s", seconds, a timedelta) waits at most that long (then `LockWaitTimeout`).
    `wait` is the same as `timeout` (the REST field's name). `lease`: a duration (None: the
    server's `locks.lease.default`). `priority`: 0..9, "background" or "foreground". `owner`: the owner this grant is made under
    (default: one of its own per acquisition); `reentrant`: True for an owner of the calling
    thread (asyncio: task), so a nested acquire there gets the same grant. `on_lost(held)`:
    called once if the lock is lost while held. `watchdog=False`: nothing renews the grant or
    watches it; its lease runs out unless you renew it."""

    lease: Duration | None
    wait: Duration | None
    timeout: Duration | None
    blocking: bool
    priority: Priority | None
    owner: str | None
    reentrant: bool
    on_lost: Callable[[Any], Any] | None
    watchdog: bool


class ReadWriteArgs(AcquireArgs, total=False):
    """`LockArgs` but `mode`: the options of `read_lock` (shared) and `write_lock` (exclusive),
    which choose the mode themselves."""

    scope: Literal["key", "tree"]
    lock_delay: Duration | None
    preempt: Duration | None
    on_revoke: Callable[[Any, float], Any] | None


class LockArgs(ReadWriteArgs, total=False):
    """`AcquireArgs` and a lock's `mode` and `scope`, and its `lock_delay` (a duration, at most a
    minute: after the lock ends without a release, its keys wait that long before another owner
    gets them; docs/API.md "Lock-delay"). Preemption (docs/API.md "Preemption"): `preempt` (a
    grace; needs `wait` and the preempt privilege) asks holders of lower priority in the way to
    yield; `on_revoke(held, grace_s)` is called once when this lock's holder is asked to yield
    (release within `grace_s` seconds, or lose the lock)."""

    mode: Literal["exclusive", "shared"]


class AsyncAcquireArgs(AcquireArgs, total=False):
    """`AcquireArgs` of the asyncio client: `cancel_on_lost` cancels the block's task at a loss."""

    cancel_on_lost: bool


class AsyncLockArgs(LockArgs, total=False):
    """`LockArgs` of the asyncio client, with `cancel_on_lost`."""

    cancel_on_lost: bool


class AsyncReadWriteArgs(ReadWriteArgs, total=False):
    """`ReadWriteArgs` of the asyncio client, with `cancel_on_lost`."""

    cancel_on_lost: bool


class LoopArgs(TypedDict, total=False):
    """The settings of `leader_loop` (eslm/election.py `LoopSettings`): `candidate` (default: one
    of its own), `value`, `lease`, `round_wait` (how long each campaign waits on the server),
    `on_lost`."""

    candidate: str | None
    value: str | None
    lease: Duration | None
    round_wait: Duration
    on_lost: Callable[[Any], Any] | None


class AsyncLoopArgs(LoopArgs, total=False):
    """`LoopArgs` of the asyncio client, with `cancel_on_lost`."""

    cancel_on_lost: bool


def check_name(value: Any, name: str) -> str:
    """A key or owner: a non-empty string of at most 512 bytes of UTF-8 (the server checks the
    rest, control characters, and answers 400 `illegal_argument_exception`)."""
    if not isinstance(value, str) or not value:
        raise InvalidArgument(f"[{name}] must be a non-empty string, got [{value!r}]")
    if len(value.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise InvalidArgument(f"[{name}] must be at most {MAX_NAME_BYTES} bytes (UTF-8)")
    return value


def check_choice(value: Any, name: str, choices: tuple) -> str:
    if value not in choices:
        raise InvalidArgument(f"[{name}] must be one of {', '.join(choices)}; got [{value!r}]")
    return value


def check_priority(value: Any) -> Priority | None:
    """0 (lowest) to 9, `background` (2) or `foreground` (7, the server's default)."""
    if value is None or value in PRIORITY_NAMES:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 9:
        return value
    raise InvalidArgument(f"[priority] must be 0..9, background or foreground; got [{value!r}]")


def path_of(key: str, action: str = "", scope: str = "key") -> str:
    """`/_locks/{key}` (`/_semaphores/{name}` for a semaphore, `/_elections/{name}` for an
    election, whose acquire is `_campaign` and release `_resign`) with the key as one URL path
    segment (`/` as `%2F`), then `action`."""
    if scope == ELECTION:
        action = ELECTION_ACTIONS.get(action, action)
    return f"{BASE_PATHS.get(scope, '/_locks/')}{quote(key, safe='')}{action}"


def watch_path(key: str, token: int, wait_ms: int, scope: str, revoke: bool = False) -> str:
    """The long poll that answers when the grant with `token` ends: a lock's `_watch`, or for
    a leadership the election's `_observe` of its term (docs/API.md "Elections": it wakes when
    that leadership ends, and answers at once when the term is no longer the current one)."""
    if scope == ELECTION:
        return path_of(key, f"/_observe?term={int(token)}&wait={wait_ms}ms", ELECTION)
    notices = "&revoke=true" if revoke else ""  # docs/API.md "Preemption"
    return path_of(key, f"/_watch?token={int(token)}&wait={wait_ms}ms&scope={scope}{notices}")


def keyed_body(owner: str, fencing_token: int, scope: str, acquisition: str | None) -> dict:
    """The body of a release or renew of one grant, naming it by token and acquisition id
    (docs/API.md "Acquisitions"): a semaphore's endpoints know their scope; an election's name
    the owner `candidate` and the token `term`."""
    named = {} if acquisition is None else {"acquisition": acquisition}
    if scope == ELECTION:
        return {"candidate": owner, "term": fencing_token, **named}
    body = {"owner": owner, "fencing_token": fencing_token, **named}
    if scope != SEMAPHORE:
        body["scope"] = scope
    return body


def check_value(value: Any) -> str | None:
    """A leader's published `value`: None, or a string of at most 1024 bytes of UTF-8."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"[value] must be a string, got [{value!r}]")
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_ELECTION_VALUE_BYTES:
        raise InvalidArgument(f"[value] must be at most {MAX_ELECTION_VALUE_BYTES} bytes (UTF-8), got {size}")
    return value


def check_owner_choice(owner: Any, reentrant: Any, session: Any) -> None:
    """`owner` and `reentrant` choose a grant's owner: at most one of them, and neither under a
    session (its locks are the session owner's)."""
    if not isinstance(reentrant, bool):
        raise InvalidArgument(f"[reentrant] must be True or False, got [{reentrant!r}]")
    if owner is not None:
        check_name(owner, "owner")
        if reentrant:
            raise InvalidArgument("[owner] and [reentrant] cannot both be given: an owner of your own is "
                                  "reentrant wherever you use it")
    if session is not None and (owner is not None or reentrant):
        raise InvalidArgument(f"[{'owner' if owner is not None else 'reentrant'}] cannot be given with a "
                              "session: the session's owner holds its locks")


def unmoded(options: Mapping[str, object], call: str) -> dict[str, Any]:
    """The options of `read_lock` or `write_lock`, which choose the mode themselves."""
    if "mode" in options:
        raise InvalidArgument(f"[mode] is not an option of {call}: it chooses the mode; use lock(key, mode=...)")
    return dict(options)


def check_count(value: Any, name: str, most: int) -> int:
    """A semaphore's `limit` or `permits`: an integer 1..`most`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise InvalidArgument(f"[{name}] must be an integer 1..{most}, got [{value!r}]")
    return value


@dataclass(frozen=True)
class Target:
    """One lock of a request: a key, its mode and scope."""

    key: str
    mode: str = "exclusive"
    scope: str = "key"

    @classmethod
    def of(cls, item: Any) -> "Target":
        """A `Target`, a key string, or a mapping `{"key", "mode"?, "scope"?}`."""
        if isinstance(item, Target):
            return item
        if isinstance(item, str):
            return cls.checked(item)
        if isinstance(item, Mapping):
            unknown = set(item) - {"key", "mode", "scope"}
            if unknown:
                raise InvalidArgument(f"[locks] entries take key, mode, scope; got {sorted(unknown)}")
            return cls.checked(item.get("key"), item.get("mode", "exclusive"), item.get("scope", "key"))
        raise InvalidArgument(f"[locks] entries are keys or {{key, mode, scope}} mappings, got [{item!r}]")

    @classmethod
    def checked(cls, key: Any, mode: Any = "exclusive", scope: Any = "key") -> "Target":
        return cls(check_name(key, "key"), check_choice(mode, "mode", MODES),
                   check_choice(scope, "scope", SCOPES))

    def entry(self) -> dict:
        return {"key": self.key, "mode": self.mode, "scope": self.scope}


def wait_millis(wait: Duration | None, timeout: Duration | None, blocking: Any) -> int | None:
    """How long an acquire waits, in milliseconds (None: until granted), from the caller's
    `blocking`, `timeout` and `wait` (at most one of the latter two, and neither with
    `blocking=False`)."""
    if not isinstance(blocking, bool):
        raise InvalidArgument(f"[blocking] must be True or False, got [{blocking!r}]")
    if wait is not None and timeout is not None:
        raise InvalidArgument("[wait] and [timeout] are the same setting: give one")
    limit = optional_millis(timeout, "timeout") if wait is None else optional_millis(wait, "wait")
    if not blocking:
        if limit is not None:
            raise InvalidArgument("[timeout] cannot be given with blocking=False (it tries once)")
        return 0
    return limit


@dataclass(frozen=True)
class LockOptions:
    """Everything one `lock` / `acquire` / `try_lock` / `lock_many` call asks for. `lease_ms`
    (None: the server's `locks.lease.default`) and `wait_ms` (None: until granted, re-sent past
    the server's `locks.wait.max` by `steps.acquire`) are milliseconds; `on_lost(held)` is called once if the lock is lost while held;
    `cancel_on_lost` (asyncio only) cancels the task running the block when it is."""

    targets: tuple[Target, ...]
    multi: bool = False
    lease_ms: int | None = None
    wait_ms: int | None = None
    priority: Priority | None = None
    session: Any = None
    on_lost: Callable[[Any], Any] | None = None
    cancel_on_lost: bool = False
    # False: no watchdog renews the grant nor watches it for a loss; its lease runs out unless
    # the caller renews it (`held.renew()`), as with redis-py's Lock.
    watchdog: bool = True
    # A semaphore's (docs/API.md "Semaphores"): permits asked for and the limit.
    permits: int | None = None
    limit: int | None = None
    # The owner of this grant: asked for by the caller (`owner=`), else chosen by the client when
    # it sends the acquire (`ClientBase.owner_for`: one per acquisition unless `reentrant`).
    owner: str | None = None
    reentrant: bool = False
    # The acquisition this acquire is (docs/API.md "Acquisitions"), chosen by the client with the
    # owner (`ClientBase.acquisition_for`): sent with every retry of the acquire, so a retry gets
    # the grant an unseen answer carried, and named by the release and renewals of the grant.
    acquisition: str | None = None
    value: str | None = None  # a leadership's published value (docs/API.md "Elections")
    lock_delay_ms: int | None = None  # docs/API.md "Lock-delay"
    preempt_ms: int | None = None  # docs/API.md "Preemption": the grace given to holders in the way
    on_revoke: Callable[[Any, float], Any] | None = None

    @property
    def election(self) -> bool:
        return self.targets[0].scope == ELECTION

    @classmethod
    def leadership(cls, name: Any, *, candidate: str | None = None, value: Any = None,
                   wait: Duration | None = None, lease: Duration | None = None, session: Any = None,
                   on_lost: Callable[[Any], Any] | None = None,
                   cancel_on_lost: bool = False) -> "LockOptions":
        """A campaign in election `name` as `candidate` (default: one of its own), publishing
        `value`; no priority, mode or scope (the campaign endpoint has none)."""
        if candidate is not None:
            check_name(candidate, "candidate")
            if session is not None:
                raise InvalidArgument("[candidate] cannot be given with a session: the session's owner campaigns")
        options = cls.build((Target(check_name(name, "name"), scope=ELECTION),), False, wait=wait,
                            lease=lease, session=session, on_lost=on_lost, cancel_on_lost=cancel_on_lost)
        return dataclasses.replace(options, owner=candidate, value=check_value(value))

    @classmethod
    def semaphore(cls, name: Any, limit: Any, permits: Any = 1, **kw) -> "LockOptions":
        """`permits` of semaphore `name` of `limit`."""
        limit = check_count(limit, "limit", MAX_SEMAPHORE_LIMIT)
        permits = check_count(permits, "permits", limit)
        if kw.get("lock_delay") is not None:
            raise InvalidArgument("[lock_delay] a semaphore has no lock-delay")
        if kw.get("preempt") is not None:
            raise InvalidArgument("[preempt] a semaphore's holders are not preempted")
        options = cls.build((Target(check_name(name, "name"), scope=SEMAPHORE),), False, **kw)
        return dataclasses.replace(options, permits=permits, limit=limit)

    @classmethod
    def single(cls, key: Any, *, mode: str = "exclusive", scope: str = "key", **kw) -> "LockOptions":
        return cls.build((Target.checked(key, mode, scope),), False, **kw)

    @classmethod
    def many(cls, locks: Iterable[Any], **kw) -> "LockOptions":
        if isinstance(locks, (str, bytes, Mapping)):
            raise InvalidArgument("[locks] must be a list of keys or {key, mode, scope} mappings")
        targets = tuple(Target.of(item) for item in locks)
        if not targets:
            raise InvalidArgument("[locks] must name at least one key")
        return cls.build(targets, True, **kw)

    @classmethod
    def build(cls, targets, multi, *, lease: Duration | None = None, wait: Duration | None = None,
              timeout: Duration | None = None, blocking: bool = True, priority: Priority | None = None, session: Any = None, owner: str | None = None,
              reentrant: bool = False, on_lost: Callable[[Any], Any] | None = None,
              cancel_on_lost: bool = False, lock_delay: Duration | None = None,
              preempt: Duration | None = None,
              on_revoke: Callable[[Any, float], Any] | None = None,
              watchdog: bool = True) -> "LockOptions":
        for name, callback in (("on_lost", on_lost), ("on_revoke", on_revoke)):
            if callback is not None and not callable(callback):
                raise InvalidArgument(f"[{name}] must be callable, got [{callback!r}]")
        if not isinstance(watchdog, bool):
            raise InvalidArgument(f"[watchdog] must be True or False, got [{watchdog!r}]")
        if preempt is not None and multi:
            raise InvalidArgument("[preempt] a multi-lock does not preempt")
        check_owner_choice(owner, reentrant, session)
        return cls(targets, multi, optional_millis(lease, "lease"), wait_millis(wait, timeout, blocking),
                   check_priority(priority), session, on_lost, bool(cancel_on_lost), owner=owner,
                   reentrant=reentrant, lock_delay_ms=optional_millis(lock_delay, "lock_delay"),
                   preempt_ms=optional_millis(preempt, "preempt"), on_revoke=on_revoke, watchdog=watchdog)

    def waiting(self, blocking: bool | None, timeout: Duration | None) -> "LockOptions":
        """These options with a lock object's `acquire(blocking, timeout)` (redis-py's and
        kazoo's signature): unchanged when neither is given."""
        if blocking is None and timeout is None:
            return self
        blocking = True if blocking is None else blocking
        return dataclasses.replace(self, wait_ms=wait_millis(None, timeout, blocking))

    def path(self) -> str:
        if self.multi:
            return "/_locks/_acquire"
        return path_of(self.targets[0].key, "/_acquire", self.targets[0].scope)

    def body(self, owner: str, wait_ms: int | None) -> dict:
        """The acquire body (docs/API.md "POST /_locks/{key}/_acquire" / "POST /_locks/_acquire"), with `wait_ms` left of
        the caller's wait (retries after a 503 spend the same budget)."""
        body: dict = {"owner": owner}
        if self.election:
            body = {"candidate": owner} if self.value is None else {"candidate": owner, "value": self.value}
        elif self.multi:
            body["locks"] = [t.entry() for t in self.targets]
        elif self.limit is not None:
            body.update(permits=self.permits, limit=self.limit)
        else:
            body.update(mode=self.targets[0].mode, scope=self.targets[0].scope)
        optional = {"wait": wait_ms, "lease": self.lease_ms, "priority": self.priority,
                    "session": self.session.id if self.session is not None else None,
                    "lock_delay": self.lock_delay_ms, "preempt": self.preempt_ms,
                    "acquisition": self.acquisition}
        body.update({k: v for k, v in optional.items() if v is not None})
        return body
