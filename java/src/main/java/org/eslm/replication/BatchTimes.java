package org.eslm.replication;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How long a partition's recent batches took to reach every in-sync copy, from handing the
 * batch to replication to the last copy's answer: the primary's and the replicas' appends and
 * fsyncs and the transport round trip. Every replicated hand-off waits for one such round trip
 * (docs/ARCHITECTURE.md "Replication"), so an operator reads here whether a slow lock service is
 * a slow disk or network (bench/RESULTS.md, "Where a replicated hand-off's time goes").
 *
 * <p>Keeps the last {@link #WINDOW} round trips; percentiles are computed when read (diagnostics
 * are rare, batches are not). Thread-safe: batches of one partition finish one at a time, reads
 * come from any thread.
 */
final class BatchTimes {
    /** Round trips the percentiles are taken over: a few seconds of contended traffic. */
    static final int WINDOW = 1024;

    private final long[] nanos = new long[WINDOW];
    private long count;

    synchronized void record(long elapsedNanos) {
        nanos[(int) (count % WINDOW)] = elapsedNanos;
        count++;
    }

    /**
     * {@code {"batches": n, "round_trip_ms": {"p50", "p99", "max"}}}: batches committed since the
     * partition opened here, and the percentiles (nearest rank) of the last {@link #WINDOW},
     * absent before the first.
     */
    Map<String, Object> toMap() {
        long[] recent;
        long batches;
        synchronized (this) {
            batches = count;
            recent = Arrays.copyOf(nanos, (int) Math.min(count, WINDOW));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("batches", batches);
        if (recent.length > 0) {
            Arrays.sort(recent);
            Map<String, Object> roundTrip = new LinkedHashMap<>();
            roundTrip.put("p50", millis(rank(recent, 0.50)));
            roundTrip.put("p99", millis(rank(recent, 0.99)));
            roundTrip.put("max", millis(recent[recent.length - 1]));
            out.put("round_trip_ms", roundTrip);
        }
        return out;
    }

    /** The nearest-rank percentile {@code q} of sorted {@code values}. */
    private static long rank(long[] sorted, double q) {
        int index = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, index)];
    }

    /** Milliseconds with three decimals: round trips are fractions of a millisecond. */
    private static double millis(long nanos) {
        return Math.round(nanos / 1_000.0) / 1_000.0;
    }
}
