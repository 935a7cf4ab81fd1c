"""The `eslm` command: its arguments, and every failure turned into one line on stderr and an
exit status of exits.py (a usage error, a refused request, no connection: never a traceback).

    eslm lock KEY -- CMD [ARGS...]     run CMD while holding KEY (hold.py)
    eslm elect NAME -- CMD [ARGS...]   run CMD while leading election NAME (hold.py)
    eslm ls [--prefix P] [--owner O]   the held locks (show.py)
    eslm who KEY                       holders and waiters of KEY (show.py)
    eslm release --force KEY           evict every holder of KEY (release.py)

Where it connects and as whom: connection.py."""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import traceback
from typing import Any, NoReturn, Sequence

from .. import __version__
from ..client import Locks
from ..durations import to_millis
from ..errors import (AcquireCancelled, InvalidArgument, LockConflict, LockConnectionError, LockError,
                      LockWaitTimeout)
from . import connection, hold, release, show
from .child import say
from .exits import Exit, Failure

WRAPPERS = ("lock", "elect")  # the commands that run a command given after `--`
EXIT_CODES = """exit status (lock, elect: the command's own, unless eslm itself failed):
  0-255    the command's status; 128+N when signal N ended it
  110      bad arguments, flags or environment: nothing was sent
  111      not acquired within --timeout (0: busy): the command did not run
  112      the lock or leadership was lost while the command ran: it was stopped
  113      no answer from Elasticsearch (refused, timed out, TLS)
  114      Elasticsearch refused the request (credentials, privileges, no plugin)
  115      release --force: nothing held the key
  119      a bug of eslm (-v shows the traceback)
  126 127  the command is not executable / not found
  128+N    eslm got signal N before the command started"""


class Parser(argparse.ArgumentParser):
    """argparse, whose usage errors are a `Failure` (one line, status 110) rather than its own
    usage text and status 2."""

    def error(self, message: str) -> NoReturn:
        raise Failure(Exit.USAGE, f"{message} (see {self.prog} --help)")


def parser() -> Parser:
    top = Parser(prog="eslm", description="Cluster-wide locks of the Elasticsearch Lock Manager from the shell.",
                 epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"eslm {__version__} (elasticsearch-lock-manager)")
    add_common_flags(top, None)
    commands = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True

    def command(name: str, help: str, usage: str | None = None) -> Parser:
        sub = commands.add_parser(name, help=help, description=help, usage=usage, epilog=EXIT_CODES,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        add_common_flags(sub, argparse.SUPPRESS)  # given before or after the command name
        return sub

    lock = command("lock", "run a command while holding a lock; its exit status is the command's",
                   "eslm lock [options] KEY -- CMD [ARGS...]")
    lock.add_argument("key", metavar="KEY", help="the lock's key")
    lock.add_argument("--shared", action="store_true", help="hold it shared (readers) instead of exclusive")
    add_holding_flags(lock, "the lock's")

    elect = command("elect", "run a command while leading an election; its exit status is the command's",
                    "eslm elect [options] NAME -- CMD [ARGS...]")
    elect.add_argument("name", metavar="NAME", help="the election's name")
    elect.add_argument("--value", help="published with the leadership (GET /_elections/NAME shows it)")
    add_holding_flags(elect, "the leadership's")

    ls = command("ls", "list the held locks")
    ls.add_argument("--prefix", help="only keys that start with it")
    ls.add_argument("--owner", help="only this owner's locks")
    ls.add_argument("--json", action="store_true", help="the locks as JSON")

    who = command("who", "the holders and waiters of a key")
    who.add_argument("key", metavar="KEY")
    who.add_argument("--scope", choices=("key", "tree", "semaphore"), default="key")
    who.add_argument("--json", action="store_true", help="the server's answer as JSON")

    evict = command("release", "evict every holder of a key (the administrator's force-release)",
                    "eslm release --force [--reason TEXT] KEY")
    evict.add_argument("key", metavar="KEY")
    evict.add_argument("--force", action="store_true", help="required: every holder loses the key")
    evict.add_argument("--reason", help="logged on the node and kept in the lock history")
    evict.add_argument("--scope", choices=release.SCOPES, default="key")
    evict.add_argument("--json", action="store_true", help="the server's answer as JSON")
    return top


def add_common_flags(parser: argparse.ArgumentParser, default: Any) -> None:
    """The connection flags and -v, on `eslm` and on each command: a command's copies default to
    SUPPRESS, so that they do not undo the same flag given before the command's name."""
    connection.add_flags(parser, default)
    parser.add_argument("-v", "--verbose", action="count", default=0 if default is None else default,
                        help="say more on stderr (the client's warnings; -vv: its debug log)")


def add_holding_flags(sub: argparse.ArgumentParser, whose: str) -> None:
    sub.add_argument("--timeout", metavar="DURATION",
                     help="wait at most this long (30s, 2m, 1.5 = seconds; 0: do not wait); default: until granted")
    sub.add_argument("--lease", metavar="DURATION",
                     help=f"{whose} lease, renewed while the command runs (default: the server's, 30s)")
    sub.add_argument("--grace", metavar="DURATION", default="10s",
                     help="when the lock is lost: how long after SIGTERM the command gets SIGKILL (default 10s)")


def duration(text: str | None, flag: str) -> Any:
    """A flag's duration as the client takes it: Elasticsearch units, or a plain number of seconds."""
    if text is None:
        return None
    value: Any = float(text) if re.fullmatch(r"\d+(\.\d+)?", text.strip()) else text
    to_millis(value, flag)  # InvalidArgument naming the flag, before anything is sent
    return value


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str] | None]:
    """The arguments, and for `lock` and `elect` the command after the first `--` (None for the
    other commands, whose `--` is argparse's own: `eslm who -- -odd-key`)."""
    argv = list(argv)
    at = argv.index("--") if "--" in argv else None
    try:
        args = parser().parse_args(argv if at is None else argv[:at])
    except Failure:
        if at is None:
            raise
        args = parser().parse_args(argv)  # `who -- -odd-key`; a wrapper's own error otherwise
        if args.command in WRAPPERS:
            raise
    if args.command not in WRAPPERS:
        return (args if at is None else parser().parse_args(argv)), None
    command = [] if at is None else argv[at + 1:]
    if not command:
        what = "KEY" if args.command == "lock" else "NAME"
        raise Failure(Exit.USAGE, f"no command to run: give it after --, as in eslm {args.command} {what} -- CMD [ARGS...]")
    return args, command


def run(argv: Sequence[str]) -> int:
    args, command = parse(argv)
    configure_logging(args.verbose)
    timing = {}
    if args.command in WRAPPERS:
        timing = {"timeout": duration(args.timeout, "timeout"), "lease": duration(args.lease, "lease"),
                  "grace_s": to_millis(duration(args.grace, "grace"), "grace") / 1000}
    es = connection.Connection.of(args, os.environ).client()
    try:
        with Locks(es) as locks:
            return dispatch(locks, args, command, timing)
    finally:
        es.close()


def dispatch(locks: Any, args: argparse.Namespace, command: list[str] | None, timing: dict) -> int:
    if args.command == "lock":
        assert command is not None
        return hold.run_locked(locks, args.key, command, shared=args.shared, **timing)
    if args.command == "elect":
        assert command is not None
        return hold.run_elected(locks, args.name, command, value=args.value, **timing)
    if args.command == "ls":
        held = show.list_locks(locks, args.prefix, args.owner)
        if not held and not args.json:
            say("no locks held" + (" that match" if args.prefix or args.owner else ""))
            return Exit.OK
        print(show.render_locks(held, args.json))
    elif args.command == "who":
        print(show.render_who(args.key, locks.get(args.key, scope=args.scope), args.json))
    elif args.command == "release":
        if not args.force:
            raise Failure(Exit.USAGE, "release evicts every holder of the key: say so with --force (each "
                                      "`eslm lock` releases its own lock when its command ends)")
        print(release.force_release(locks, args.key, args.scope, args.reason, args.json))
    return Exit.OK


def configure_logging(verbose: int) -> None:
    """The client's and the official client's log on stderr, `eslm: ` first: errors only by
    default (eslm says what matters itself); with -v the warnings, and the client's retries and
    renewals; with -vv everything (each request too)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("eslm: %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.ERROR if verbose == 0 else logging.WARNING if verbose == 1 else logging.DEBUG)
    if verbose == 1:
        logging.getLogger("eslm").setLevel(logging.INFO)


def failure_of(error: BaseException) -> Failure:
    """What eslm says and exits with for an error of the client."""
    if isinstance(error, Failure):
        return error
    if isinstance(error, InvalidArgument):
        return Failure(Exit.USAGE, str(error))
    if isinstance(error, LockWaitTimeout):
        return Failure(Exit.NOT_ACQUIRED, f"not acquired within --timeout: {error.reason}")
    if isinstance(error, LockConflict):
        holders = ", ".join(error.holders) if error.holders else "another owner"
        return Failure(Exit.NOT_ACQUIRED, f"held by {holders} (--timeout 0: not waiting): {error.reason}")
    if isinstance(error, LockConnectionError):
        return Failure(Exit.CONNECTION, f"no answer from Elasticsearch: {short_reason(str(error))}")
    if isinstance(error, AcquireCancelled):
        return Failure(Exit.NOT_ACQUIRED, str(error))
    if isinstance(error, LockError):
        kind = f"{error.status} {error.type}" if error.type else str(error.status)
        return Failure(Exit.REFUSED, f"Elasticsearch refused the request ({kind}): {error.reason}")
    return Failure(Exit.INTERNAL, f"internal error ({type(error).__name__}: {error}); -v shows where")


def short_reason(text: str) -> str:
    """The telling part of a transport failure (the official client nests its causes)."""
    errno = re.search(r"\[Errno -?\d+\] ([^)'\"]+)", text)
    if errno:
        return errno.group(1).strip()
    for words in ("timed out", "certificate verify failed", "Name or service not known"):
        if words in text:
            return words
    return text if len(text) <= 200 else text[:200] + "..."


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """The console script: runs `eslm` with `argv` (default: the process's arguments) and exits
    with its status."""
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in args or "-vv" in args or "--verbose" in args
    try:
        code = run(args)
    except KeyboardInterrupt:
        code = Exit.SIGNALLED + 2
    except BrokenPipeError:  # `eslm ls | head`: the reader is gone
        sys.stderr.close()
        code = Exit.OK
    except BaseException as error:  # noqa: BLE001 - every failure is one line and a status
        if isinstance(error, SystemExit):  # --help, --version
            raise
        failure = failure_of(error)
        if verbose and failure.code == Exit.INTERNAL:
            traceback.print_exc()
        say(failure.message)
        code = failure.code
    sys.exit(int(code))
