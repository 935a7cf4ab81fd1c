package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.CoreClient;
import org.eslm.core.LockConflictException;
import org.eslm.service.LockMetrics.Kind;
import org.eslm.service.LockMetrics.Metric;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lock metrics' wiring, with a recording registry over the real core: every metric registered
 * once, by its kind, under a name Elasticsearch's validator takes; the counters and gauges read from
 * one snapshot per collection; the time samples drained into the histograms only while the
 * metrics are on; the plugin's own counts; and docs/OPERATIONS.md "Metrics" listing them all.
 */
class LockMetricsTest {
    /**
     * Elasticsearch's metric name pattern (modules/apm {@code MetricValidator}, after its NAMING.md):
     * {@code es.}, at most 8 segments of lower-case letters, digits and {@code _}, a known suffix.
     */
    private static final Pattern ES_METRIC_NAME = Pattern.compile(
            "es(\\.[a-z][a-z0-9_]{0,29}){1,8}\\.(total|current|ratio|status|usage|size|utilization|histogram|time)");

    private static final Path DOCS = Path.of(System.getProperty("user.dir"), "docs");

    @BeforeAll
    static void loadLibrary() {
        NativeTestSupport.setUp();
    }

    private static CoreClient core() {
        return new CoreClient(NativeLockCore.create("{}")); // partition 0 open, served without a lease
    }

    private static void call(CoreClient core, NativeOp op, String args) {
        core.call(op, 0, args);
    }

    @Test
    void everyMetricIsRegisteredOnceByItsKindUnderAGuideName() {
        try (CoreClient core = core()) {
            LockMetrics metrics = new LockMetrics(core);
            RecordingMeters meters = new RecordingMeters();
            metrics.register(meters, () -> true);
            metrics.register(meters, () -> true); // once: the registry would refuse a second
            assertEquals(Metric.values().length, meters.registered.size());
            List<String> callbacks = new ArrayList<>();
            for (Metric m : Metric.values()) {
                RecordingMeters.Registered r = meters.registered.get(m.metricName);
                String type =
                        switch (m.kind) {
                            case COUNTER -> m.field != null ? "long_async_counter" : "long_counter";
                            case GAUGE -> "long_gauge";
                            case HISTOGRAM -> m.field != null ? "long_histogram" : "double_histogram";
                        };
                assertEquals(new RecordingMeters.Registered(type, m.description, m.unit), r, m.name());
                if (type.startsWith("long_async") || type.equals("long_gauge")) {
                    callbacks.add(m.metricName);
                }
                assertTrue(ES_METRIC_NAME.matcher(m.metricName).matches(), m.metricName);
                assertTrue(m.metricName.startsWith("es.locks."), m.metricName);
                String suffix = m.metricName.substring(m.metricName.lastIndexOf('.') + 1);
                Set<String> suffixes =
                        switch (m.kind) {
                            case COUNTER -> Set.of("total");
                            case GAUGE -> Set.of("current", "usage");
                            case HISTOGRAM -> Set.of("histogram");
                        };
                assertTrue(suffixes.contains(suffix), m.metricName);
                for (String unitWord : List.of("_ms", "millis", "bytes", "seconds")) {
                    assertFalse(m.metricName.contains(unitWord), "units are given at registration: " + m.metricName);
                }
                assertEquals(m.kind == Kind.HISTOGRAM ? "ms" : m == Metric.NATIVE_MEMORY ? "bytes" : "count", m.unit);
            }
            metrics.close();
            assertEquals(callbacks, meters.closed, "closing stops every callback");
        }
    }

    @Test
    void aCollectionReadsTheCoresCountersAndGaugesFromOneSnapshot() {
        try (CoreClient core = core()) {
            LockMetrics metrics = new LockMetrics(core, TimeUnit.HOURS.toNanos(1));
            RecordingMeters meters = new RecordingMeters();
            metrics.register(meters, () -> true);
            call(core, NativeOp.ACQUIRE, "{\"key\":\"k\",\"owner\":\"a\"}");
            assertThrows(
                    LockConflictException.class, () -> call(core, NativeOp.ACQUIRE, "{\"key\":\"k\",\"owner\":\"b\"}"));
            call(core, NativeOp.ACQUIRE, "{\"key\":\"k\",\"owner\":\"c\",\"wait_ms\":60000,\"request_id\":1}");
            call(core, NativeOp.RELEASE, "{\"key\":\"k\",\"owner\":\"a\"}"); // c granted after its wait
            call(core, NativeOp.ACQUIRE, "{\"key\":\"f\",\"owner\":\"a\"}");
            call(core, NativeOp.FORCE_RELEASE, "{\"key\":\"f\"}");
            call(core, NativeOp.SESSION_CREATE, "{\"owner\":\"s\"}");

            Map<String, List<Long>> seen = meters.collect();
            Map<Metric, Long> expected = new LinkedHashMap<>();
            expected.put(Metric.GRANTS, 3L);
            expected.put(Metric.CONFLICTS, 1L);
            expected.put(Metric.WAIT_TIMEOUTS, 0L);
            expected.put(Metric.EXPIRIES, 0L);
            expected.put(Metric.FORCE_RELEASES, 1L);
            expected.put(Metric.PREEMPTIONS, 0L);
            expected.put(Metric.DEADLOCKS, 0L);
            expected.put(Metric.HELD, 1L);
            expected.put(Metric.WAITERS, 0L);
            expected.put(Metric.SESSIONS, 1L);
            expected.put(Metric.PARTITIONS_SERVED, 1L);
            expected.put(Metric.PARTITIONS_UNCONFIRMED, 0L);
            expected.forEach((m, v) -> assertEquals(List.of(v), seen.get(m.metricName), m.metricName));
            assertTrue(seen.get(Metric.NATIVE_MEMORY.metricName).get(0) > 0, seen.toString());
            assertEquals(expected.size() + 1, seen.size(), "every callback answered: " + seen.keySet());

            call(core, NativeOp.ACQUIRE, "{\"key\":\"later\",\"owner\":\"a\"}");
            assertEquals(List.of(1L), meters.collect().get(Metric.HELD.metricName), "the snapshot answers");
        }
        CoreClient core = core(); // closed by the test: what a collection after the node's close sees
        LockMetrics metrics = new LockMetrics(core, 0);
        RecordingMeters meters = new RecordingMeters();
        metrics.register(meters, () -> true);
        assertEquals(List.of(0L), meters.collect().get(Metric.HELD.metricName));
        call(core, NativeOp.ACQUIRE, "{\"key\":\"k\",\"owner\":\"a\"}");
        assertEquals(List.of(1L), meters.collect().get(Metric.HELD.metricName), "a snapshot gone stale is read again");
        core.close();
        assertEquals(List.of(), meters.collect().get(Metric.GRANTS.metricName), "a closed core: nothing observed");
    }

    @Test
    void timeSamplesReachTheHistogramsOnlyWhileTheMetricsAreOn() {
        try (CoreClient core = core()) {
            AtomicBoolean on = new AtomicBoolean();
            LockMetrics metrics = new LockMetrics(core);
            RecordingMeters meters = new RecordingMeters();
            metrics.register(meters, on::get);
            List<Number> holds = meters.recorded.get(Metric.HOLD_TIME.metricName);
            List<Number> waits = meters.recorded.get(Metric.WAIT_TIME.metricName);
            List<Number> handoffs = meters.recorded.get(Metric.HANDOFF_TIME.metricName);
            List<Number> roundTrips = meters.recorded.get(Metric.REPLICATION_ROUND_TRIP_TIME.metricName);

            assertEquals(LockMetrics.UNTIMED, metrics.clock(), "off: nothing is timed");
            metrics.handedOff(metrics.clock());
            metrics.replicated(2_000_000);
            holdAndHandOver(core, "k");
            metrics.drain();
            assertEquals(List.of(), holds);
            assertEquals(List.of(), handoffs);
            assertEquals(List.of(), roundTrips);

            on.set(true);
            metrics.drain(); // starts the keeping: what was held while off never arrives
            assertEquals(List.of(), holds);
            holdAndHandOver(core, "k2");
            metrics.drain();
            assertEquals(2, holds.size(), "the holder's and the waiter's hold: " + holds);
            assertEquals(1, waits.size(), "the waiter's wait: " + waits);
            metrics.drain();
            assertEquals(2, holds.size(), "each sample once");

            long started = metrics.clock();
            assertNotEquals(LockMetrics.UNTIMED, started);
            metrics.handedOff(started);
            assertTrue(handoffs.size() == 1 && handoffs.get(0).doubleValue() >= 0, handoffs.toString());
            metrics.replicated(2_500_000);
            assertEquals(List.of(2.5), roundTrips, "in milliseconds");

            on.set(false);
            metrics.drain(); // stops the keeping
            assertEquals(LockMetrics.UNTIMED, metrics.clock());
            holdAndHandOver(core, "k3");
            on.set(true);
            metrics.drain();
            assertEquals(2, holds.size(), "nothing kept while off: " + holds);
        }
    }

    /** A lock held by {@code a}, a waiter {@code b} queued, granted on a's release, then released. */
    private static void holdAndHandOver(CoreClient core, String key) {
        call(core, NativeOp.ACQUIRE, "{\"key\":\"" + key + "\",\"owner\":\"a\"}");
        call(core, NativeOp.ACQUIRE, "{\"key\":\"" + key + "\",\"owner\":\"b\",\"wait_ms\":60000,\"request_id\":9}");
        call(core, NativeOp.RELEASE, "{\"key\":\"" + key + "\",\"owner\":\"a\"}");
        call(core, NativeOp.RELEASE, "{\"key\":\"" + key + "\",\"owner\":\"b\"}");
    }

    @Test
    void failoversAndCopyFailuresAreCountedOnceRegistered() {
        try (CoreClient core = core()) {
            LockMetrics metrics = new LockMetrics(core);
            metrics.failedOver(); // no-op instruments before registration
            RecordingMeters meters = new RecordingMeters();
            metrics.register(meters, () -> false);
            metrics.failedOver();
            metrics.copyFailed();
            metrics.copyFailed();
            assertEquals(List.of(1L), meters.recorded.get(Metric.FAILOVERS.metricName));
            assertEquals(List.of(1L, 1L), meters.recorded.get(Metric.COPY_FAILURES.metricName));
        }
    }

    /** A row of docs/OPERATIONS.md "Metrics": {@code | `name` | kind | unit | meaning |}. */
    private static final Pattern METRIC_ROW =
            Pattern.compile("^\\| `(es\\.locks\\.[a-z_.]+)` \\| ([a-z]+) \\| `?([a-z]+)`? \\|", Pattern.MULTILINE);

    @Test
    void operationsListsEveryMetricWithItsKindAndUnit() throws IOException {
        Map<String, String> documented = new LinkedHashMap<>();
        Matcher row = METRIC_ROW.matcher(Files.readString(DOCS.resolve("OPERATIONS.md")));
        while (row.find()) {
            documented.put(row.group(1), row.group(2) + " " + row.group(3));
        }
        Map<String, String> registered = new LinkedHashMap<>();
        for (Metric m : Metric.values()) {
            registered.put(m.metricName, m.kind.name().toLowerCase(java.util.Locale.ROOT) + " " + m.unit);
        }
        assertEquals(registered, documented);
    }
}
