package org.eslm.service;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.CoreClient;

/**
 * What a bridge call caused, delivered: the events it raised go to the requests waiting for them
 * ({@link PendingRequests}) and the core's next deadline to the {@link TickScheduler}. On a
 * replicated partition both wait until the partition's changes so far reached every in-sync copy
 * ({@link Commits}): nobody may learn of a change before it is replicated
 * (docs/ARCHITECTURE.md "Replication", "Waiting without threads, and time"). A grant handed to a
 * waiting request is a hand-off, timed from the start of the call that raised it
 * ({@link LockMetrics#clock}) to its delivery.
 */
final class Deliveries {
    private static final Logger logger = LogManager.getLogger(Deliveries.class);

    private final CoreClient client;
    private final PartitionGate partitions;
    /** {@code locks.durability: replicated}: partitions opened here replicate through {@link #commits}. */
    private final boolean replicated;

    private final Commits commits;
    private final PendingRequests pending;
    private final TickScheduler ticks;
    private final LockMetrics metrics;

    Deliveries(
            CoreClient client,
            PartitionGate partitions,
            boolean replicated,
            ThreadPool threadPool,
            AtomicBoolean closed,
            IntFunction<RuntimeException> notServed,
            IntSupplier peerFormat,
            ReplicationParts replication,
            LockMetrics metrics) {
        this.client = client;
        this.partitions = partitions;
        this.replicated = replicated;
        this.metrics = metrics;
        this.commits =
                replication.commits(client, this::handle, notServed, peerFormat, partitions, metrics::replicated);
        this.pending = new PendingRequests(this::answer);
        this.ticks = new TickScheduler(threadPool, partitions, this::answer, closed);
    }

    Commits commits() {
        return commits;
    }

    PendingRequests pending() {
        return pending;
    }

    /** Whether partitions opened here replicate their changes. */
    boolean replicated() {
        return replicated;
    }

    /** A tick soon: a request registered meanwhile may have missed the one scheduled. */
    void tickSoon() {
        ticks.soon();
    }

    /**
     * One bridge call whose events are delivered and whose next tick is scheduled: at once, or,
     * on a replicated partition, once what the call changed is committed.
     */
    Map<String, Object> answer(NativeOp op, int partition, String argsJson) {
        long started = metrics.clock();
        Map<String, Object> envelope = client.call(op, partition, argsJson);
        handleAfterCommit(partition, envelope, started);
        return envelope;
    }

    /** When a call whose grants are timed as hand-offs starts ({@link LockMetrics#clock}). */
    long clock() {
        return metrics.clock();
    }

    /**
     * Runs {@code listener} once the partition's changes so far are replicated (at once in
     * {@code memory} durability). Replicated but no longer served here (closed after the change):
     * fails it as retryable — the change reached no copy, so nobody may be told of it.
     */
    void afterCommit(int partition, ActionListener<Void> listener) {
        if (replicated) {
            commits.afterCommit(partition, listener);
        } else {
            listener.onResponse(null);
        }
    }

    /** Delivers {@code envelope} once {@code partition}'s changes so far are committed. */
    void handleAfterCommit(int partition, Map<String, Object> envelope) {
        handleAfterCommit(partition, envelope, LockMetrics.UNTIMED);
    }

    /** As {@link #handleAfterCommit(int, Map)}, its grants timed from {@code started} ({@link #clock}). */
    void handleAfterCommit(int partition, Map<String, Object> envelope, long started) {
        if (partition == NativeLockCore.ALL_PARTITIONS || replicated == false) {
            handle(envelope, started);
            return;
        }
        // A failed batch gives the partition up: its waiting requests fail with it.
        commits.afterCommit(partition, ActionListener.wrap(ignored -> handle(envelope, started), e -> {}));
    }

    /** Delivers the events of an answer and schedules the next tick. */
    void handle(Map<String, Object> envelope) {
        handle(envelope, LockMetrics.UNTIMED);
    }

    /**
     * Delivers the events of an answer of a call that started at {@code started} ({@link #clock}):
     * each grant handed to its waiting request is a hand-off; and schedules the next tick.
     */
    void handle(Map<String, Object> envelope, long started) {
        Object events = BridgeField.EVENTS.in(envelope);
        if (events instanceof List<?> list) {
            for (Object event : list) {
                try {
                    if (pending.dispatch((Map<?, ?>) event)) {
                        metrics.handedOff(started);
                    }
                } catch (Exception e) {
                    logger.error(() -> "failed to deliver lock event " + event, e);
                }
            }
        }
        if (BridgeField.TICK_IN_MS.in(envelope) instanceof Number inMs) {
            ticks.schedule(inMs.longValue());
        }
    }

    /**
     * Brings {@code partition} (every served one with {@link NativeLockCore#ALL_PARTITIONS}) up to
     * now before a read. The core moves on only a partition whose lease is current: on one whose
     * owner may be cut off, moving on would expire leases and grant waiters while a new owner may
     * serve the same keys, so such a partition stands as it is, and the read itself is refused
     * (docs/ARCHITECTURE.md "Silent owners").
     */
    void tickServed(int partition) {
        Iterable<Integer> targets =
                partition == NativeLockCore.ALL_PARTITIONS ? partitions.served() : List.of(partition);
        for (Integer p : targets) {
            try {
                answer(NativeOp.TICK, p, "{}");
            } catch (RuntimeException e) {
                // Closed under us (moving away): the read itself says so, or skips it.
                logger.debug(() -> "tick of lock partition [" + p + "] before a read failed", e);
            }
        }
    }
}
