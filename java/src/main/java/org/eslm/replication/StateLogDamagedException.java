package org.eslm.replication;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A partition's state log that cannot be trusted: damaged before its tail, not a state log, of a
 * newer format, or with batches that do not follow each other (docs/RELIABILITY.md "A damaged
 * state log"). The copy it belongs to is not used; the message names the file and what an
 * operator can do.
 */
public final class StateLogDamagedException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;

    StateLogDamagedException(Path file, long offset, String what) {
        super("lock state log [" + file + "] cannot be used: " + what + " (at byte " + offset + ")");
        this.file = file;
    }

    StateLogDamagedException(Path file, String what) {
        super("lock state log [" + file + "] cannot be used: " + what);
        this.file = file;
    }

    /** The log this is about. */
    public Path file() {
        return file;
    }
}
