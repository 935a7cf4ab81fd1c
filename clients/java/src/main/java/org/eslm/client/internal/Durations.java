package org.eslm.client.internal;

import java.time.Duration;

/** Durations go on the wire as whole milliseconds (docs/API.md, "Conventions": a JSON number). */
public final class Durations {
    private Durations() {}

    /** {@code d} in milliseconds, rounded up (so 1 ns asks for 1 ms, never for 0: "do not wait"). */
    public static long millis(Duration d, String field) {
        if (d == null) {
            throw new IllegalArgumentException("[" + field + "] must not be null");
        }
        if (d.isNegative()) {
            throw new IllegalArgumentException("[" + field + "] must not be negative, got [" + d + "]");
        }
        long whole = d.toMillis();
        return d.minusMillis(whole).isZero() ? whole : Math.addExact(whole, 1);
    }

    /** Like {@link #millis} but for a lease or ttl, which must be longer than zero. */
    public static long positiveMillis(Duration d, String field) {
        long ms = millis(d, field);
        if (ms == 0) {
            throw new IllegalArgumentException("[" + field + "] must be longer than zero");
        }
        return ms;
    }
}
