"""The command `eslm lock` and `eslm elect` run: started in a session of its own (as GNU
`timeout` runs its command in a group of its own), so that stopping it stops everything it
started (a shell's pipeline too); the signals `eslm` gets are forwarded to it; and stopped,
SIGTERM then SIGKILL after a grace, when the lock it runs under is lost.

Who touches what: the main thread starts the command and waits for it; signal handlers (which
Python runs in the main thread, between two steps of whatever it was doing) only forward, so they
never take a lock the main thread may hold; the client's watchdog thread calls `stop` when the
lock is lost, under `_mutex` with the start, so a loss is never missed between the check and the
start of the command."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from typing import Callable, Mapping, Sequence

from .exits import Exit, Failure

# What eslm forwards to the command (a terminal's Ctrl-C, a service manager's stop, a hang-up).
FORWARDED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
                  if hasattr(signal, name))


def status_of(returncode: int) -> int:
    """A command's exit status as a shell reports it: its code, or 128 + N when signal N ended it."""
    return 128 - returncode if returncode < 0 else returncode


def check_runnable(command: Sequence[str]) -> None:
    """Refuses, before any lock is taken, a command that cannot be run: not found (127), or found
    and not executable (126), as a shell would."""
    program = command[0]
    if os.sep in program:
        if not os.path.exists(program):
            raise Failure(Exit.NOT_FOUND, f"{program}: no such file")
        if os.path.isdir(program) or not os.access(program, os.X_OK):
            raise Failure(Exit.CANNOT_RUN, f"{program}: not an executable file")
    elif shutil.which(program) is None:
        raise Failure(Exit.NOT_FOUND, f"{program}: command not found")


class Child:
    """One run of the command. `run(env)` starts it (unless it was stopped first) and answers
    its exit status; `stop(message)` from any thread ends it: SIGTERM to its process group,
    SIGKILL after `grace_s` seconds, and anything left in the group killed once it exits."""

    def __init__(self, command: Sequence[str], grace_s: float, say: Callable[[str], None]):
        self.command = list(command)
        self.grace_s = grace_s
        self.say = say
        self.process: subprocess.Popen | None = None
        self.stopped: str | None = None  # why it was stopped (the lock lost), if it was
        self.signal: int | None = None  # the first signal that came while no command ran
        self._mutex = threading.Lock()
        self._killer: threading.Timer | None = None

    def run(self, env: Mapping[str, str]) -> int:
        """Runs the command with `env` added to eslm's environment; its exit status. `Failure`
        if it cannot be started (126, 127) or was stopped before it started (the lock lost)."""
        with self._mutex:
            if self.stopped is not None:
                raise Failure(Exit.LOST, f"{self.stopped}: the command was not started")
            if self.signal is not None:
                raise self.interrupted()
            try:
                self.process = subprocess.Popen(self.command, env={**os.environ, **env}, start_new_session=True)
            except FileNotFoundError as e:
                raise Failure(Exit.NOT_FOUND, f"{self.command[0]}: command not found ({e.strerror})") from e
            except PermissionError as e:
                raise Failure(Exit.CANNOT_RUN, f"{self.command[0]}: cannot run it ({e.strerror})") from e
            except OSError as e:
                raise Failure(Exit.CANNOT_RUN, f"{self.command[0]}: cannot run it ({e})") from e
        if self.signal is not None:  # it came while the command was being started
            self._signal_group(self.signal)
        returncode = self.process.wait()
        with self._mutex:
            if self._killer is not None:
                self._killer.cancel()
            if self.stopped is not None:
                self._signal_group(signal.SIGKILL)  # what it left behind runs without the lock
        return status_of(returncode)

    def forward(self, signum: int) -> bool:
        """Passes `signum` on to the command's group; when no command runs (not yet, or no
        longer) keeps the first such signal in `signal` and answers False. For signal handlers:
        takes no lock."""
        process = self.process
        if process is None or process.poll() is not None:
            if self.signal is None:
                self.signal = signum
            return False
        self._signal_group(signum)
        return True

    def interrupted(self) -> Failure:
        """The failure to end with when a signal came before the command ran: 128 + N."""
        assert self.signal is not None
        name = signal.Signals(self.signal).name
        return Failure(Exit.SIGNALLED + self.signal, f"{name} before the command started: it did not run")

    def stop(self, message: str) -> None:
        """Ends the command (once): `message` and what is done are said on stderr, SIGTERM now,
        SIGKILL after the grace. A command not started yet will not start."""
        with self._mutex:
            if self.stopped is not None:
                return
            self.stopped = message
            process = self.process
            if process is None:
                self.say(message)
                return
            if process.poll() is not None:
                self.say(f"{message} (after the command exited)")
                return
            self.say(f"{message}: stopping the command (SIGTERM to its process group {process.pid}, "
                     f"SIGKILL after {self.grace_s:g}s)")
            self._signal_group(signal.SIGTERM)
            self._killer = threading.Timer(self.grace_s, self._kill)
            self._killer.daemon = True
            self._killer.start()

    def _kill(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            self.say(f"the command did not stop within {self.grace_s:g}s: SIGKILL")
            self._signal_group(signal.SIGKILL)

    def _signal_group(self, signum: int) -> None:
        """`signum` to the command's process group (its session's: its id is the command's pid,
        kept while any of its processes lives)."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass  # the group is gone


class Forwarding:
    """While in force (`with Forwarding(child, on_wait):`), the signals of `FORWARDED` (but those
    eslm was started ignoring, which the command inherits ignored) go to the command when it runs; before it runs the first is kept in `child.signal` (the command will
    not start) and `on_wait()` is called (it cancels the lock's wait). SIGTSTP is ignored
    meanwhile: a suspended eslm would stop renewing a lock its command still works under. The
    previous handlers come back at the end."""

    def __init__(self, child: Child, on_wait: Callable[[], None]):
        self.child = child
        self.on_wait = on_wait
        self._previous: dict[int, object] = {}

    def __enter__(self) -> "Forwarding":
        for signum in FORWARDED:
            if signal.getsignal(signum) is signal.SIG_IGN:
                continue  # ignored by whoever started eslm (a shell's background job): the command inherits that
            self._previous[signum] = signal.signal(signum, self._handle)
        if hasattr(signal, "SIGTSTP"):
            self._previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, signal.SIG_IGN)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]

    def _handle(self, signum: int, frame) -> None:
        if not self.child.forward(signum):
            self.on_wait()


def say(message: str) -> None:
    """One line on stderr, `eslm: ` first."""
    print(f"eslm: {message}", file=sys.stderr, flush=True)
