package org.eslm.client.internal;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations go on the wire as whole milliseconds (docs/API.md, "Conventions": a JSON number). */
public final class Durations {
    private static final Pattern TIME_VALUE = Pattern.compile("(\\d+)(nanos|micros|ms|s|m|h|d)");

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

    /**
     * An Elasticsearch time value as the node prints it ({@code 10m}, {@code 630000ms}, {@code
     * 30s}; docs/API.md "Settings"), so a setting read back from the node can be compared.
     */
    public static Duration parse(String value) {
        Matcher m = TIME_VALUE.matcher(value.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a time value: [" + value + "]");
        }
        long amount = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "nanos" -> Duration.ofNanos(amount);
            case "micros" -> Duration.ofNanos(amount * 1_000);
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            case "h" -> Duration.ofHours(amount);
            default -> Duration.ofDays(amount);
        };
    }
}
