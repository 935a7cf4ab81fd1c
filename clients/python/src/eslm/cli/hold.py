"""`eslm lock KEY -- CMD` and `eslm elect NAME -- CMD`: the command runs while the lock (or the
leadership) is held, as `etcdctl lock NAME -- cmd` and `consul lock PREFIX cmd` run theirs.

The lock is taken with the client's `locks.lock` (waiting until granted unless `--timeout`),
renewed by its watchdog and loss-watched while the command runs, and released when the command
has exited. The command learns its fencing token from its environment. A loss (the server ended
the lock: force-released, expired while renewals failed) stops the command at once (child.py)
and eslm exits 112, whatever the command then answered: its work may have overlapped the next
holder's, which only the fencing token protects against."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from ..errors import AcquireCancelled, LockError, LockLost
from .child import Child, Forwarding, check_runnable, say
from .exits import Exit, Failure

KEY = "ESLM_LOCK_KEY"
TOKEN = "ESLM_FENCING_TOKEN"
OWNER = "ESLM_LOCK_OWNER"
ELECTION = "ESLM_ELECTION_NAME"
TERM = "ESLM_ELECTION_TERM"


def run_locked(locks: Any, key: str, command: Sequence[str], *, lease: Any, timeout: Any, shared: bool,
               grace_s: float) -> int:
    """`eslm lock`: the command's exit status, run while `key` is held."""
    check_runnable(command)
    child = Child(command, grace_s, say)
    what = f"lock [{key}]"
    block = locks.lock(key, lease=lease, timeout=timeout, mode="shared" if shared else "exclusive",
                       on_lost=lambda held: child.stop(f"{what} lost: {reason_of(held)}"))
    return hold(block, child, what, lambda held: {
        KEY: held.key, TOKEN: str(held.fencing_token), OWNER: held.owner})


def run_elected(locks: Any, name: str, command: Sequence[str], *, value: str | None, lease: Any, timeout: Any,
                grace_s: float) -> int:
    """`eslm elect`: the command's exit status, run while leading election `name`."""
    check_runnable(command)
    child = Child(command, grace_s, say)
    what = f"leadership of [{name}]"
    block = locks.leadership(name, value=value, wait=timeout, lease=lease,
                             on_lost=lambda lead: child.stop(f"{what} lost: {reason_of(lead)}"))
    return hold(block, child, what, lambda lead: {
        ELECTION: lead.name, TERM: str(lead.term), TOKEN: str(lead.term), OWNER: lead.owner})


def hold(block: Any, child: Child, what: str, environment: Callable[[Any], Mapping[str, str]]) -> int:
    """Enters `block` (a lock or leadership block of the sync client), runs `child` with
    `environment(held)` while it is held, and leaves it. A signal before the command starts
    cancels the wait (128 + N); during it, signals are forwarded."""
    status: int | None = None
    with Forwarding(child, on_wait=block.cancel):
        try:
            with block as held:
                status = child.run(environment(held))
        except LockLost as lost:
            if child.stopped is not None:
                ended = "" if status is None else f" (it exited with {status})"
                raise Failure(Exit.LOST, f"{child.stopped}; the command was stopped{ended}") from lost
            raise Failure(Exit.LOST, f"{what} was lost before it was released ({reason_of(lost.held)}): the "
                                     f"command (exit {status}) may have run without it") from lost
        except LockError as error:
            if status is not None:  # the command ran and ended; only the release failed
                say(f"the release of {what} failed ({error}): it ends with its lease")
                return status
            if isinstance(error, AcquireCancelled) and child.signal is not None:
                raise child.interrupted() from error
            raise
    assert status is not None
    return status


def reason_of(held: Any) -> str:
    """Why a lock or leadership was lost, in the client's words (the server's reason for an end
    it reported: `the server ended it (force_released)`)."""
    error = getattr(held, "lost_error", None)
    text = str(error) if error is not None else "for an unknown reason"
    marker = "was lost: "
    return text[text.index(marker) + len(marker):] if marker in text else text
