"""The exit statuses of `eslm` (clients/python/README.md "Command line"), and `Failure`, the way
every part of the command line reports a failure of its own: a one-line message and one of
these statuses, never a traceback.

`eslm lock` and `eslm elect` pass the command's own exit status through, so their own failures
must not look like one of a command's: they use a band of their own, 110 to 115, beside the
wrapper conventions of the shell, GNU `timeout`, `env` and `nohup` for a command that could not
be run (126 not executable, 127 not found) or died of a signal (128 + N). `flock(1)` exits 1 and
`etcdctl lock` 1 to 6 for their own failures, which a command's status can hide."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """What `eslm` exits with when the status is not the command's."""

    OK = 0
    USAGE = 110  # bad arguments, flags or environment: nothing was sent
    NOT_ACQUIRED = 111  # --timeout ran out (or 0 and busy): the command did not run
    LOST = 112  # the lock or leadership was lost while the command ran: it was stopped
    CONNECTION = 113  # no answer from Elasticsearch (refused, reset, timed out, TLS)
    REFUSED = 114  # Elasticsearch answered with an error (credentials, privileges, no plugin, ...)
    NOT_HELD = 115  # release --force of a key nobody holds
    INTERNAL = 119  # a bug of eslm: reported in one line (-v shows the traceback)
    CANNOT_RUN = 126  # the command was found but could not be run (as the shell's 126)
    NOT_FOUND = 127  # the command was not found (as the shell's 127)
    SIGNALLED = 128  # + N: eslm stopped by signal N before the command ran; a command killed by N


class Failure(Exception):
    """A failure of `eslm` itself, reported as `eslm: <message>` on stderr and `code`."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message
