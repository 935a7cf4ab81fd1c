package org.eslm.service;

import java.io.Closeable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.telemetry.metric.DoubleHistogram;
import org.elasticsearch.telemetry.metric.LongCounter;
import org.elasticsearch.telemetry.metric.LongHistogram;
import org.elasticsearch.telemetry.metric.LongWithAttributes;
import org.elasticsearch.telemetry.metric.MeterRegistry;
import org.elasticsearch.threadpool.Scheduler;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.core.CoreClient;

/**
 * The lock metrics this node publishes through Elasticsearch's telemetry, the {@link MeterRegistry}
 * Elasticsearch gives the plugin (docs/OPERATIONS.md "Metrics"). {@link Metric} is the one list:
 * every metric's name, kind, unit and description, named by Elasticsearch's naming guide
 * ({@code es.<segments>.<suffix>}: {@code total} for a counter, {@code current} or {@code usage}
 * for a gauge, {@code histogram}; units given at registration, never in the name). Where each
 * figure comes from:
 * <ul>
 *   <li>the core's figures ({@link Metric#field} set): counters and gauges read by the registry's
 *   callbacks when Elasticsearch collects, from one snapshot of the core's {@code TELEMETRY} answer
 *   (rust/lock-jni {@code ops/telemetry.rs}) kept for {@link #SNAPSHOT_TTL_NANOS}, so a collection
 *   costs one bridge call and the grant path nothing; the wait and hold times, the samples the
 *   partitions' histograms kept since the last drain, which a task on the generic pool drains
 *   every {@link #DRAIN_INTERVAL} and records, each value as many times as it was seen;</li>
 *   <li>figures of the plugin ({@link Metric#field} null): failovers and copy failures counted where
 *   they happen ({@code cluster.PartitionPromotion}, {@code replication.LockReplicationAction}), a
 *   batch's round trip where {@code replication.GroupCommit} measures it, and hand-offs, timed by
 *   {@link Deliveries} from the start of the bridge call that raised a grant to its delivery.</li>
 * </ul>
 * Until {@link #register} every instrument is a no-op. While Elasticsearch's metrics are off (its
 * {@code telemetry.metrics.enabled}, dynamic, read at each drain) its registry is a no-op that
 * never calls back; then nothing is drained (the core keeps no samples), no hand-off is timed and
 * no round trip recorded: the plugin pays one volatile read per bridge call.
 */
public final class LockMetrics implements Closeable {
    private static final Logger logger = LogManager.getLogger(LockMetrics.class);

    /** How often the partitions' time samples are drained into the histograms. */
    static final TimeValue DRAIN_INTERVAL = TimeValue.timeValueSeconds(2);
    /** How long one read of the core's counters and gauges answers every instrument's callback (one collection). */
    static final long SNAPSHOT_TTL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** A call's start when nothing is timed (the metrics are off). */
    static final long UNTIMED = Long.MIN_VALUE;
    /** Elasticsearch's setting that turns its metrics on (module {@code apm}, dynamic). */
    static final String METRICS_ENABLED = "telemetry.metrics.enabled";

    private static final String COUNT = "count";
    private static final String MS = "ms";
    private static final String BYTES = "bytes";
    private static final String BUCKETED =
            " Each sample is the upper bound of its bucket in the core's histogram: exact below"
                    + " 64 ms, above it over-states the time by less than 1/32 (3.125 %).";

    /** What a metric is, as its name's suffix says. */
    public enum Kind {
        /** Monotonic, {@code .total}: the core's counters since each partition opened here, or counted here since start. */
        COUNTER,
        /** Samples, {@code .histogram}. */
        HISTOGRAM,
        /** A value now, {@code .current} (or {@code .usage} for bytes). */
        GAUGE
    }

    /** Every lock metric: docs/OPERATIONS.md "Metrics" lists the same (DocsAgreeWithCodeTest). */
    public enum Metric {
        GRANTS(
                Kind.COUNTER,
                "es.locks.grants.total",
                COUNT,
                BridgeField.GRANTS,
                "Locks granted by the partitions this node serves, at once or to a waiter (re-entrant grants not counted)."),
        CONFLICTS(
                Kind.COUNTER,
                "es.locks.conflicts.total",
                COUNT,
                BridgeField.CONFLICTS,
                "Acquires refused at once because the lock was held (409 lock_conflict_exception)."),
        WAIT_TIMEOUTS(
                Kind.COUNTER,
                "es.locks.wait_timeouts.total",
                COUNT,
                BridgeField.TIMEOUTS,
                "Waits that ran out before a grant."),
        EXPIRIES(
                Kind.COUNTER,
                "es.locks.expiries.total",
                COUNT,
                BridgeField.EXPIRIES,
                "Leases that ran out: each a holder that lost its lock."),
        FORCE_RELEASES(
                Kind.COUNTER,
                "es.locks.force_releases.total",
                COUNT,
                BridgeField.FORCE_RELEASES,
                "Locks an administrator took away with _force_release."),
        PREEMPTIONS(
                Kind.COUNTER,
                "es.locks.preemptions.total",
                COUNT,
                BridgeField.PREEMPTIONS,
                "Locks taken away when the grace a preempting waiter gave them ended."),
        DEADLOCKS(
                Kind.COUNTER,
                "es.locks.deadlocks.total",
                COUNT,
                BridgeField.DEADLOCKS,
                "Waiters chosen as deadlock victims."),
        FAILOVERS(
                Kind.COUNTER,
                "es.locks.failovers.total",
                COUNT,
                null,
                "Lock partitions a copy on this node took over from its standby after their owner failed, left or"
                        + " went silent."),
        COPY_FAILURES(
                Kind.COUNTER,
                "es.locks.replication.copy_failures.total",
                COUNT,
                null,
                "Copies of this node's lock partitions that did not take a batch and were failed."),
        WAIT_TIME(
                Kind.HISTOGRAM,
                "es.locks.wait_time.histogram",
                MS,
                BridgeField.WAIT_TIME_MS,
                "How long granted requests waited in a queue (grants without a wait are not sampled)." + BUCKETED),
        HOLD_TIME(
                Kind.HISTOGRAM,
                "es.locks.hold_time.histogram",
                MS,
                BridgeField.HOLD_TIME_MS,
                "How long locks were held, sampled when they ended (released, expired, force-released, preempted)."
                        + BUCKETED),
        HANDOFF_TIME(
                Kind.HISTOGRAM,
                "es.locks.handoff_time.histogram",
                MS,
                null,
                "On the owner, from the start of the bridge call that let a waiter in (a release, an expiry's tick,"
                        + " a session's end, a downgrade) to the delivery of its grant, once committed to every copy."),
        REPLICATION_ROUND_TRIP_TIME(
                Kind.HISTOGRAM,
                "es.locks.replication.round_trip_time.histogram",
                MS,
                null,
                "A batch's round trip from the owner to every copy of its partition, appends and fsyncs included."),
        HELD(
                Kind.GAUGE,
                "es.locks.held.current",
                COUNT,
                BridgeField.HELD,
                "Locks held in the partitions this node serves."),
        WAITERS(
                Kind.GAUGE,
                "es.locks.waiters.current",
                COUNT,
                BridgeField.WAITING,
                "Requests queued for a lock in the partitions this node serves."),
        SESSIONS(
                Kind.GAUGE,
                "es.locks.sessions.current",
                COUNT,
                BridgeField.SESSIONS,
                "Sessions open in the partitions this node serves."),
        NATIVE_MEMORY(
                Kind.GAUGE,
                "es.locks.native_memory.usage",
                BYTES,
                BridgeField.MEMORY_BYTES,
                "The lock core's estimate of the native memory its lock tables hold on this node."),
        PARTITIONS_SERVED(
                Kind.GAUGE,
                "es.locks.partitions.served.current",
                COUNT,
                BridgeField.SERVED,
                "Lock partitions this node serves (holds their primary)."),
        PARTITIONS_UNCONFIRMED(
                Kind.GAUGE,
                "es.locks.partitions.unconfirmed.current",
                COUNT,
                BridgeField.UNCONFIRMED,
                "Lock partitions this node serves whose lease is not current: they grant nothing and answer 503.");

        /** What it is. */
        public final Kind kind;
        /** Its name, {@code es.locks.*}. */
        public final String metricName;
        /** Its unit, given at registration. */
        public final String unit;
        /** The member of the core's {@code TELEMETRY} answer it is read from; null when the plugin measures it. */
        public final BridgeField field;
        /** What it means, given at registration. */
        public final String description;

        Metric(Kind kind, String metricName, String unit, BridgeField field, String description) {
            this.kind = kind;
            this.metricName = metricName;
            this.unit = unit;
            this.field = field;
            this.description = description;
        }
    }

    private final CoreClient core;
    private final long snapshotTtlNanos;
    /** Whether Elasticsearch's metrics were on at the last drain (hand-offs and round trips recorded). */
    private volatile boolean live;

    private volatile LongCounter failovers = LongCounter.NOOP;
    private volatile LongCounter copyFailures = LongCounter.NOOP;
    private volatile LongHistogram waitTime = LongHistogram.NOOP;
    private volatile LongHistogram holdTime = LongHistogram.NOOP;
    private volatile DoubleHistogram handoffTime = DoubleHistogram.NOOP;
    private volatile DoubleHistogram roundTripTime = DoubleHistogram.NOOP;

    /** The callback instruments, closed with this. Guarded by this. */
    private final List<AutoCloseable> callbacks = new ArrayList<>();
    /** The drain's schedule. Guarded by this. */
    private Scheduler.Cancellable drains;
    /** Whether {@link #register} ran; guarded by this. */
    private boolean registered;
    /** Whether Elasticsearch's metrics are on now (read at each drain); off until registered. */
    private volatile BooleanSupplier metricsOn = () -> false;

    private boolean closed;

    /**
     * Guards the last read of the core's figures and when it was taken ({@link System#nanoTime()}):
     * a lock of its own, never held while the registry is called, so that a collection calling
     * back while instruments are registered or closed waits for nothing of theirs.
     */
    private final Object figuresLock = new Object();

    private Map<String, Object> figures;
    private long figuresAt;

    LockMetrics(CoreClient core) {
        this(core, SNAPSHOT_TTL_NANOS);
    }

    /** With the figures of one read answering callbacks for {@code snapshotTtlNanos} (tests). */
    LockMetrics(CoreClient core, long snapshotTtlNanos) {
        this.core = core;
        this.snapshotTtlNanos = snapshotTtlNanos;
    }

    /**
     * Registers every {@link Metric} in {@code registry}, once (a second call does nothing);
     * {@code metricsOn} says whether Elasticsearch's metrics are on ({@link #metricsOn}).
     */
    public synchronized void register(MeterRegistry registry, BooleanSupplier metricsOn) {
        if (registered || closed) {
            return;
        }
        registered = true;
        this.metricsOn = metricsOn;
        for (Metric metric : Metric.values()) {
            registerOne(registry, metric);
        }
        live = metricsOn.getAsBoolean();
    }

    /** Drains the time samples into the histograms every {@link #DRAIN_INTERVAL} on the generic pool, until closed. */
    public synchronized void startDraining(ThreadPool threadPool) {
        if (closed == false && drains == null) {
            drains = threadPool.scheduleWithFixedDelay(this::drain, DRAIN_INTERVAL, threadPool.generic());
        }
    }

    private void registerOne(MeterRegistry registry, Metric m) {
        switch (m.kind) {
            case COUNTER -> {
                if (m.field != null) {
                    callbacks.add(registry.registerLongsAsyncCounter(
                            m.metricName, m.description, m.unit, () -> observe(m.field)));
                } else if (m == Metric.FAILOVERS) {
                    failovers = registry.registerLongCounter(m.metricName, m.description, m.unit);
                } else {
                    copyFailures = registry.registerLongCounter(m.metricName, m.description, m.unit);
                }
            }
            case GAUGE ->
                callbacks.add(registry.registerLongsGauge(m.metricName, m.description, m.unit, () -> observe(m.field)));
            case HISTOGRAM -> {
                switch (m) {
                    case WAIT_TIME -> waitTime = registry.registerLongHistogram(m.metricName, m.description, m.unit);
                    case HOLD_TIME -> holdTime = registry.registerLongHistogram(m.metricName, m.description, m.unit);
                    case HANDOFF_TIME ->
                        handoffTime = registry.registerDoubleHistogram(m.metricName, m.description, m.unit);
                    default -> roundTripTime = registry.registerDoubleHistogram(m.metricName, m.description, m.unit);
                }
            }
        }
    }

    /**
     * Whether Elasticsearch's metrics are on now: its dynamic {@code telemetry.metrics.enabled}
     * where the {@code apm} module registers it; never with the no-op registry Elasticsearch
     * gives when nothing collects; always with another telemetry that registers no such setting.
     */
    public static BooleanSupplier metricsOn(ClusterSettings settings, MeterRegistry registry) {
        if (registry == MeterRegistry.NOOP) {
            return () -> false;
        }
        Setting<?> enabled = settings.get(METRICS_ENABLED);
        if (enabled == null) {
            return () -> true;
        }
        return () -> Boolean.TRUE.equals(settings.get(enabled));
    }

    /** A copy of a partition on this node took it over (a failover): counted. */
    public void failedOver() {
        failovers.increment();
    }

    /** A copy of a partition this node owns did not take a batch and is being failed: counted. */
    public void copyFailed() {
        copyFailures.increment();
    }

    /** The start of a bridge call whose grants are timed as hand-offs: now, or {@link #UNTIMED} while the metrics are off. */
    long clock() {
        return live ? System.nanoTime() : UNTIMED;
    }

    /** A grant was handed to its waiting request; its call started at {@code started} ({@link #clock}). */
    void handedOff(long started) {
        if (started != UNTIMED) {
            handoffTime.record(millis(System.nanoTime() - started));
        }
    }

    /** A batch reached every copy in {@code roundTripNanos}. */
    void replicated(long roundTripNanos) {
        if (live) {
            roundTripTime.record(millis(roundTripNanos));
        }
    }

    private static double millis(long nanos) {
        return nanos / 1_000_000.0;
    }

    /**
     * One run of the drain: with the metrics on, the samples kept since the last run go into the
     * histograms (the first run only starts the keeping); when they were just turned off, the core
     * stops keeping them.
     */
    void drain() {
        boolean on = metricsOn.getAsBoolean();
        boolean was = live;
        live = on;
        if (on == false && was == false) {
            return;
        }
        Map<String, Object> read;
        try {
            read = read(on ? "take" : "stop");
        } catch (RuntimeException e) {
            logger.debug("the lock core's time samples could not be drained", e);
            return;
        }
        record(waitTime, BridgeField.WAIT_TIME_MS.in(read));
        record(holdTime, BridgeField.HOLD_TIME_MS.in(read));
    }

    /** Records each {@code [value, count]} pair of {@code samples} {@code count} times. */
    private static void record(LongHistogram histogram, Object samples) {
        if (samples instanceof List<?> pairs) {
            for (Object pair : pairs) {
                List<?> p = (List<?>) pair;
                long value = ((Number) p.get(0)).longValue();
                long count = ((Number) p.get(1)).longValue();
                for (long i = 0; i < count; i++) {
                    histogram.record(value);
                }
            }
        }
    }

    /** The core's figures ({@code TELEMETRY} on every partition), kept as the latest read. */
    private Map<String, Object> read(String samples) {
        Map<String, Object> figures = BridgeJson.object(BridgeField.RESULT.in(core.call(
                NativeOp.TELEMETRY,
                NativeLockCore.ALL_PARTITIONS,
                BridgeJson.toJson(BridgeField.SAMPLES.of(samples)))));
        synchronized (figuresLock) {
            this.figures = figures;
            this.figuresAt = System.nanoTime();
        }
        return figures;
    }

    /**
     * One figure for a callback: from the latest read when it is recent, else from a new one. An
     * unreadable core (closed) answers nothing rather than a value a counter would take for a reset.
     */
    Collection<LongWithAttributes> observe(BridgeField field) {
        synchronized (figuresLock) {
            if (figures == null || System.nanoTime() - figuresAt > snapshotTtlNanos) {
                try {
                    read("none");
                } catch (RuntimeException e) {
                    logger.debug("the lock core's figures could not be read for the metrics", e);
                    return List.of();
                }
            }
            return field.in(figures) instanceof Number n ? List.of(new LongWithAttributes(n.longValue())) : List.of();
        }
    }

    /** Stops the drain and the callbacks: the node is closing. */
    @Override
    public synchronized void close() {
        closed = true;
        live = false;
        if (drains != null) {
            drains.cancel();
        }
        for (AutoCloseable callback : callbacks) {
            try {
                callback.close();
            } catch (Exception e) {
                logger.debug("closing a lock metric's callback failed", e);
            }
        }
        callbacks.clear();
    }
}
