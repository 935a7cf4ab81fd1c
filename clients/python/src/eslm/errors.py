"""The exceptions of the client: one class per server error type of docs/API.md's Errors table,
mapped from Elasticsearch's error JSON (`error.type`), plus the client's own signals (a lost
lock or session, a bad argument refused before anything is sent)."""

from __future__ import annotations

from typing import Any


class LockError(Exception):
    """Base of every error of this package. Server errors carry the HTTP `status`, the
    `error.type`, the `reason` and the raw `body` (the whole error JSON: extra fields such as
    `holders`, `key` or `limit` are there). Client-side errors have `status` None."""

    error_type: str | None = None  # the `error.type` this class stands for
    http_status: int | None = None  # with that status (`status_exception` is not only 413)

    def __init_subclass__(cls, error_type: str | None = None, status: int | None = None, **kw):
        super().__init_subclass__(**kw)
        if error_type is not None:
            cls.error_type, cls.http_status = error_type, status

    def __init__(self, reason: str, status: int | None = None, body: Any = None,
                 error_type: str | None = None):
        super().__init__(reason if status is None else f"{status} {error_type or self.error_type}: {reason}")
        self.reason = reason
        self.status = status
        self.body = body
        self.type = error_type or self.error_type

    @property
    def error(self) -> dict:
        """The `error` object of the body ({} when there is none)."""
        err = self.body.get("error") if isinstance(self.body, dict) else None
        return err if isinstance(err, dict) else {}


class InvalidArgument(LockError, ValueError):
    """A bad argument (duration, mode, scope, priority, key, ...) refused by the client before
    any request is sent."""


# --- 400 --------------------------------------------------------------------------------------

class BadRequest(LockError):
    """400: the server refused the request's input."""


class RequestParseError(BadRequest, error_type="x_content_parse_exception", status=400):
    """400: the body is not JSON, not an object, or has an unknown field or a field of a wrong
    JSON type."""


class RequestEOFError(BadRequest, error_type="x_content_e_o_f_exception", status=400):
    """400: the body ends in the middle of a JSON value."""


class IllegalArgument(BadRequest, error_type="illegal_argument_exception", status=400):
    """400: a field with a bad value (key, owner, duration over its cap, ...), a missing field."""


# --- 404 --------------------------------------------------------------------------------------

class LockNotHeld(LockError, error_type="lock_not_held_exception", status=404):
    """404: release or renew of a lock this owner does not hold (expired, force-released, another
    token), or force-release of a free key."""


class SessionNotFound(LockError, error_type="session_not_found_exception", status=404):
    """404: an unknown, ended or expired session, or another owner's."""


# --- 409 --------------------------------------------------------------------------------------

class LockConflict(LockError, error_type="lock_conflict_exception", status=409):
    """409: a try-lock found the key busy; `holders` names the holder(s)."""

    @property
    def holders(self) -> list[str]:
        """The holder(s) the server named (`error.holders`)."""
        holders = self.error.get("holders", [])
        return [holders] if isinstance(holders, str) else list(holders)


class LockWaitTimeout(LockError, error_type="lock_wait_timeout_exception", status=409):
    """409: the request queued for its whole `wait` without being granted."""


class GroupNotFound(LockError, error_type="group_not_found_exception", status=404):
    """404: the group does not exist (never created, or deleted; docs/API.md "Groups")."""


class GroupAlreadyExists(LockError, error_type="group_already_exists_exception", status=409):
    """409: a group of that name exists already."""


class GroupNotEmpty(LockError, error_type="group_not_empty_exception", status=409):
    """409: a group that has members cannot be deleted; they leave first."""


class MemberAlreadyJoined(LockError, error_type="member_already_joined_exception", status=409):
    """409: the member is in the group already, under another acquisition."""


class SemaphoreLimitMismatch(LockError, error_type="semaphore_limit_mismatch_exception", status=409):
    """409: a semaphore acquire named another `limit` than the semaphore has while anyone holds
    or waits (docs/API.md "Semaphores"); `limit` is the semaphore's."""

    @property
    def limit(self) -> int | None:
        """The semaphore's limit (`error.limit`), None if the answer has none."""
        error = self.body.get("error") if isinstance(self.body, dict) else None
        value = error.get("limit") if isinstance(error, dict) else None
        return int(value) if value is not None else None


class Deadlock(LockError, error_type="deadlock_exception", status=409):
    """409: this waiter closed a cycle of waiting owners and was chosen as the victim."""


# --- 413, 429, 500, 503 -----------------------------------------------------------------------

class RequestTooLarge(LockError, error_type="status_exception", status=413):
    """413: the body is longer than the limits allow."""


class LimitExceeded(LockError, error_type="lock_limit_exceeded_exception", status=429):
    """429: a `locks.limits.*` limit was reached; `limit` names the setting, `max` its value."""

    @property
    def limit(self) -> str | None:
        """The setting whose limit was reached (`error.limit`)."""
        return self.error.get("limit")


class CorePanic(LockError, error_type="lock_core_panic_exception", status=500):
    """500: the lock core panicked serving this request (a bug); only this request failed."""


class Unavailable(LockError):
    """503 of any type: retried by the client within the caller's budget, raised after it."""


class PartitionUnavailable(Unavailable, error_type="lock_partition_unavailable_exception", status=503):
    """503: the key's partition is moving, in recovery grace, or its owner is unconfirmed; or the
    node that got the request is shutting down (`error.node_shutting_down` names it): retried."""


# --- the client's signals -----------------------------------------------------------------------

class LockLost(LockError):
    """A held lock was lost while its block ran: a renewal or the release said it was not held
    (expired, force-released), renewals failed until its lease ran out, or its session was lost.
    `held` is the handle; `__cause__` the error that showed the loss."""

    def __init__(self, reason: str, held: Any = None):
        super().__init__(reason)
        self.held = held


class SessionLost(LockLost):
    """A session ended on the server while its block ran (expired, or keep-alives failed for its
    whole ttl): every lock taken under it is lost too."""


class AcquireCancelled(LockError):
    """Not acquired: another thread cancelled the waiting acquire (`LockBlock.cancel()`). A
    grant the server made anyway is released by the client as soon as it arrives."""


class GrantExpired(LockConflict):
    """Not acquired: the grant's answer arrived so late (a slow network, a node that stalled)
    that its lease could already have run out, and the renewal tried before handing it over
    found it gone or could not reach the server in time. The key may be held by someone else
    now, so it is a `LockConflict` (`try_lock` answers None); `__cause__` is the renewal's
    error. A lock is never handed over as held after its lease could have ended."""


class VersionConflict(LockError, error_type="version_conflict_engine_exception", status=409):
    """Elasticsearch refused a document write whose version or sequence number did not match the
    document's (docs/API.md "Fenced writes and optimistic updates")."""


class StaleToken(VersionConflict):
    """A fenced write (`held.index(...)`) refused by Elasticsearch: the document already carries
    a larger version, written with the token of a later holder (409, with Elasticsearch's error).
    Or a fenced change (`held.update`, `held.read`, `held.delete`) that the plugin's script made a
    `noop` because a later holder had changed the document: the answer was a 200, so `status` is
    None, `type` is `stale_token`, `body` the answer, `fence` the document's fence token and
    `token` this lock's. Either way this holder's lock is over; what it was about to write must
    not land, and did not."""

    fence: int | None = None  # a fenced change's: the document's fence token
    token: int | None = None  # a fenced change's: the token of the lock that sent it


class UpdateConflict(VersionConflict):
    """`optimistic_update` gave up: each of its attempts lost its race with another writer (the
    document's sequence number changed between its read and its write)."""


class LockConnectionError(LockError, ConnectionError):
    """The request did not get an answer: connection refused or reset, a timeout, TLS, or a body
    that could not be read (the official client's `TransportError`, kept as `__cause__`)."""


def from_transport(error: BaseException) -> LockConnectionError:
    """The client's own error for a transport failure of the official client, cause chained."""
    wrapped = LockConnectionError(f"{type(error).__name__}: {error}")
    wrapped.__cause__ = error
    return wrapped


_BY_TYPE = {(cls.http_status, cls.error_type): cls for cls in (
    RequestParseError, RequestEOFError, IllegalArgument, LockNotHeld, SessionNotFound,
    LockConflict, LockWaitTimeout, SemaphoreLimitMismatch, Deadlock, RequestTooLarge, LimitExceeded, CorePanic,
    PartitionUnavailable, VersionConflict, GroupNotFound, GroupAlreadyExists, GroupNotEmpty, MemberAlreadyJoined,
)}

_BY_STATUS = {400: BadRequest, 503: Unavailable}


def from_response(status: int, body: Any) -> LockError:
    """The exception for an error answer: by `error.type`, else by status, else `LockError`."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error_type, reason = error.get("type"), str(error.get("reason", ""))
    else:
        error_type, reason = None, str(error if error is not None else body)
    cls = _BY_TYPE.get((status, error_type)) or _BY_STATUS.get(status, LockError)
    return cls(reason, status=status, body=body, error_type=error_type)
