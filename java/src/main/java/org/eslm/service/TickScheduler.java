package org.eslm.service;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeBounds;
import org.eslm.bridge.NativeOp;
import org.eslm.core.CoreCall;

/**
 * Time for the core: every answer says when the core's next deadline (a lease, a wait, a session)
 * falls, and this schedules one tick on the generic pool for the earliest such moment, so
 * expiries happen on time with no request arriving (docs/ARCHITECTURE.md "Waiting without
 * threads, and time"). Where a tick runs and what the time is are given ({@link Timer}, a
 * clock), so a test drives both.
 */
final class TickScheduler {
    /** Runs a task after a delay: Elasticsearch's generic pool on a node. */
    @FunctionalInterface
    interface Timer {
        void schedule(Runnable task, long delayMs);
    }

    private static final Logger logger = LogManager.getLogger(TickScheduler.class);
    /** After a failed tick: soon enough that leases still expire about on time, rare enough not to flood the log. */
    static final TimeValue RETRY_AFTER_FAILURE = TimeValue.timeValueSeconds(1);
    /**
     * How soon partitions whose lease is not current are ticked again: a heartbeat may renew it
     * (every {@link NativeBounds#HEARTBEAT_INTERVAL_MS}), the master's confirmation every {@link
     * NativeBounds#OWNER_CHECK_INTERVAL_MS}.
     */
    static final TimeValue UNSERVED_RECHECK = TimeValue.timeValueMillis(NativeBounds.HEARTBEAT_INTERVAL_MS);

    private final Timer timer;
    private final LongSupplier nanoClock;
    private final PartitionGate partitions;
    private final CoreCall core;
    private final AtomicBoolean closed;
    /** The clock's time of the earliest scheduled tick, or {@link Long#MAX_VALUE}. */
    private final AtomicLong nextTickNanos = new AtomicLong(Long.MAX_VALUE);

    /** Ticks on {@code threadPool}'s generic pool, timed by {@link System#nanoTime()}. */
    TickScheduler(ThreadPool threadPool, PartitionGate partitions, CoreCall core, AtomicBoolean closed) {
        this(
                (task, delayMs) -> threadPool.schedule(task, TimeValue.timeValueMillis(delayMs), threadPool.generic()),
                System::nanoTime,
                partitions,
                core,
                closed);
    }

    TickScheduler(Timer timer, LongSupplier nanoClock, PartitionGate partitions, CoreCall core, AtomicBoolean closed) {
        this.timer = timer;
        this.nanoClock = nanoClock;
        this.partitions = partitions;
        this.core = core;
        this.closed = closed;
    }

    /** Makes sure a tick runs within {@code inMs} (at least 1 ms from now). */
    void schedule(long inMs) {
        if (closed.get()) {
            return;
        }
        long delayMs = Math.max(1, inMs);
        long at = nanoClock.getAsLong() + TimeValue.timeValueMillis(delayMs).nanos();
        while (true) {
            long current = nextTickNanos.get();
            if (current - at <= 0 && current != Long.MAX_VALUE) {
                return; // an earlier or equal tick is already scheduled
            }
            if (nextTickNanos.compareAndSet(current, at)) {
                break;
            }
        }
        timer.schedule(this::tick, delayMs);
    }

    /** A tick as soon as possible (after a failed call, whose state change may have freed a waiter). */
    void soon() {
        schedule(1);
    }

    private void tick() {
        nextTickNanos.set(Long.MAX_VALUE);
        if (closed.get()) {
            return;
        }
        // The core moves on only the partitions whose lease is current (expiries hand locks to
        // waiters) and names the others, which are ticked again soon, once their lease may be.
        boolean unserved = false;
        for (Integer partition : partitions.served()) {
            try {
                Map<?, ?> result = (Map<?, ?>) BridgeField.RESULT.in(core.answer(NativeOp.TICK, partition, "{}"));
                unserved |= BridgeField.UNSERVED.in(result) instanceof List<?> left && left.isEmpty() == false;
            } catch (Exception e) {
                logger.error(
                        "lock core tick of partition [" + partition + "] failed; retrying in " + RETRY_AFTER_FAILURE,
                        e);
                schedule(RETRY_AFTER_FAILURE.millis());
            }
        }
        if (unserved) {
            schedule(UNSERVED_RECHECK.millis());
        }
    }
}
