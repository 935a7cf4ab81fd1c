"""Elasticsearch Lock Manager client: cluster-wide locks with fencing tokens, a lease watchdog
and a lost-lock signal, over the official `elasticsearch` client (see clients/python/README.md).

    from elasticsearch import Elasticsearch
    from eslm import Locks, ops

    with Locks(Elasticsearch("http://127.0.0.1:9200")) as locks:  # one per application
        with locks.lock("orders-42", lease="30s", wait="10s") as held:
            held.update("orders", "42", [ops.inc("items")])  # a fenced change (eslm/fenced.py)

Every acquire is made by an owner of its own, so threads and tasks sharing the client exclude
each other; reentrancy is asked for (`reentrant=True`, `owner=`, `locks.with_owner(...)`).

`AsyncLocks(AsyncElasticsearch(...))` is the same with `async with`. Leader elections:
`locks.leadership(name)` (a block that leads) and `locks.leader_loop(name, work)` (eslm/election.py).
"""

from . import ops
from .aio import AsyncHeldLock, AsyncLeadership, AsyncLockBlock, AsyncLocks, AsyncSession
from .aio_election import AsyncLeaderLoop
from .client import Locks
from .election import LeaderLoop, Leadership
from .errors import (AcquireCancelled, BadRequest, CorePanic, Deadlock, GrantExpired, GroupAlreadyExists,
                     GroupNotEmpty, GroupNotFound, IllegalArgument, MemberAlreadyJoined,
                     InvalidArgument, LimitExceeded, LockConflict, LockConnectionError, LockError,
                     LockLost, LockNotHeld, LockWaitTimeout, PartitionUnavailable, RequestEOFError,
                     RequestParseError, RequestTooLarge, SemaphoreLimitMismatch, SessionLost,
                     SessionNotFound, StaleToken, Unavailable, UpdateConflict, VersionConflict)
from .fenced import FencedResult
from .held import Grant, HeldLock
from .lock_api import LockBlock
from .session import Session

__version__ = "0.1.0"

__all__ = [
    "Locks", "LockBlock", "HeldLock", "Grant", "Session", "FencedResult", "ops",
    "AsyncLocks", "AsyncLockBlock", "AsyncHeldLock", "AsyncSession",
    "Leadership", "LeaderLoop", "AsyncLeadership", "AsyncLeaderLoop",
    "LockError", "InvalidArgument", "BadRequest", "RequestParseError", "RequestEOFError",
    "IllegalArgument", "LockNotHeld", "SessionNotFound", "LockConflict", "LockWaitTimeout",
    "Deadlock", "RequestTooLarge", "LimitExceeded", "CorePanic", "Unavailable",
    "PartitionUnavailable", "AcquireCancelled", "LockLost", "SessionLost", "SemaphoreLimitMismatch", "GrantExpired",
    "LockConnectionError", "VersionConflict", "StaleToken", "UpdateConflict",
    "GroupNotFound", "GroupAlreadyExists", "GroupNotEmpty", "MemberAlreadyJoined",
]
