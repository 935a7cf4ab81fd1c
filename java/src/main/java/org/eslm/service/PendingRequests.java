package org.eslm.service;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntPredicate;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.tasks.CancellableTask;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.tasks.TaskCancelledException;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLockException;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.core.CoreCall;
import org.eslm.core.LockException;
import org.eslm.core.LockNotHeldException;
import org.eslm.core.LockPartitionUnavailableException;
import org.eslm.core.NativeErrors;

/**
 * Requests waiting for the core's decision, and their cancellation (docs/ARCHITECTURE.md
 * "Waiting without threads, and time"). A request that may wait is registered with a request id before it
 * crosses the bridge; the core's later event for that id (granted, timed out, deadlock victim,
 * cancelled; for a watch: fired or timed out) completes its listener. A client that goes away cancels its waiter; if the grant
 * won the race, the lock is given back at once, so no lock outlives a client that can no longer
 * release it.
 */
final class PendingRequests {
    private static final Logger logger = LogManager.getLogger(PendingRequests.class);

    private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
    private final AtomicLong requestIds = new AtomicLong();
    /** Calls the core for cancellations and give-backs; their answers are handled like any other. */
    private final CoreCall core;

    PendingRequests(CoreCall core) {
        this.core = core;
    }

    /** A request waiting for the core's decision. */
    static final class Pending {
        final long requestId;
        final NativeOp op;
        final int partition;
        final ActionListener<Map<String, Object>> listener;
        volatile Long waiterId;
        volatile boolean cancelled;
        /** Whether the request's own bridge call is still running (guarded by this). */
        private boolean inCall = true;
        /** What closing its partition answered while that call ran (guarded by this). */
        private Exception failedInCall;

        Pending(long requestId, NativeOp op, int partition, ActionListener<Map<String, Object>> listener) {
            this.requestId = requestId;
            this.op = op;
            this.partition = partition;
            this.listener = listener;
        }
    }

    /** How a call that may wait went: the request, the core's envelope, its result, whether it waits. */
    record Waitable(Pending request, Map<String, Object> envelope, Map<?, ?> result, boolean waits) {}

    /**
     * Runs one call that may wait, an acquire or a watch (docs/ARCHITECTURE.md "Waiting without
     * threads, and time"). It is registered under a request id before it crosses the bridge, as
     * the core's event for it may be drained by another thread's call before this one returns;
     * {@code call} runs it with that id. When the answer's {@code waiting} member names a waiter,
     * the request waits: its task's cancellation cancels the waiter, and the core's later event
     * answers {@code listener}. Otherwise it was answered at once and the caller answers the
     * listener. A call that throws answers the listener with its failure; then null.
     */
    Waitable callWaitable(
            NativeOp op,
            int partition,
            Task task,
            ActionListener<Map<String, Object>> listener,
            BridgeField waiting,
            LongFunction<Map<String, Object>> call) {
        Pending p = register(op, partition, listener);
        Map<String, Object> envelope;
        try {
            envelope = call.apply(p.requestId);
        } catch (Exception e) {
            callFailed(p, e);
            return null;
        }
        Exception closedMeanwhile = callReturned(p);
        Map<?, ?> result = (Map<?, ?>) BridgeField.RESULT.in(envelope);
        if (waiting.in(result) instanceof Map<?, ?> ticket) {
            queued(p, ((Number) BridgeField.WAITER_ID.in(ticket)).longValue(), task);
            failIfClosedDuringCall(p, closedMeanwhile);
            return new Waitable(p, envelope, result, true);
        }
        // Answered at once; replicated, a partition closed meanwhile fails the caller's commit.
        remove(p);
        return new Waitable(p, envelope, result, false);
    }

    /**
     * Registers a request before its call: the grant event may be drained by another thread's
     * call before this one returns.
     */
    private Pending register(NativeOp op, int partition, ActionListener<Map<String, Object>> listener) {
        long requestId = requestIds.incrementAndGet();
        Pending p = new Pending(requestId, op, partition, listener);
        pending.put(requestId, p);
        return p;
    }

    /**
     * {@code p}'s own call returned or threw. A partition that closed meanwhile left {@code p} to
     * its caller ({@link #failWhere}), so that a call that panicked answers its own panic: failed
     * as retryable instead, the coordinator would send the same request to the reopened
     * partition, which it would panic again (docs/RELIABILITY.md "A panic in the core"). Answers
     * that close's failure, if any, for the caller to give when its call did not fail.
     */
    private Exception callReturned(Pending p) {
        synchronized (p) {
            p.inCall = false;
            return p.failedInCall;
        }
    }

    /** {@code p}'s own call threw {@code e}: answered with it, once (see {@link #callReturned}). */
    private void callFailed(Pending p, Exception e) {
        callReturned(p);
        if (remove(p)) {
            p.listener.onFailure(e);
        }
    }

    /**
     * {@code p} was queued by its call, in a partition that closed during that call (the close's
     * failure from {@link #callReturned}, or null): the waiter went with the partition, so
     * {@code p} is answered with that failure now.
     */
    private void failIfClosedDuringCall(Pending p, Exception closedMeanwhile) {
        if (closedMeanwhile != null && remove(p)) {
            p.listener.onFailure(closedMeanwhile);
        }
    }

    /** Forgets {@code p}; whether it was still waiting (so the caller answers it). */
    private boolean remove(Pending p) {
        return pending.remove(p.requestId) != null;
    }

    /** The core queued {@code p} as {@code waiterId}: cancelling its task now cancels the waiter. */
    private void queued(Pending p, long waiterId, Task task) {
        p.waiterId = waiterId;
        if (task instanceof CancellableTask cancellable) {
            cancellable.addListener(() -> cancel(p));
        }
    }

    /** Fails every request waiting in {@code partition} (it closed here; the coordinators retry). */
    void failPartition(int partition, Supplier<Exception> failure) {
        failWhere(p -> p == partition, failure);
    }

    /** Fails every waiting request (the node is closing). */
    void failAll(Supplier<Exception> failure) {
        failWhere(p -> true, failure);
    }

    private void failWhere(IntPredicate inPartition, Supplier<Exception> failure) {
        for (Pending p : pending.values()) {
            if (inPartition.test(p.partition) == false || leftToItsCall(p, failure)) {
                continue;
            }
            if (pending.remove(p.requestId) != null) {
                p.listener.onFailure(failure.get());
            }
        }
    }

    /** Whether {@code p}'s call is still running: its caller answers it ({@link #callReturned}). */
    private static boolean leftToItsCall(Pending p, Supplier<Exception> failure) {
        synchronized (p) {
            if (p.inCall && p.failedInCall == null) {
                p.failedInCall = failure.get();
            }
            return p.inCall;
        }
    }

    int size() {
        return pending.size();
    }

    /** The client went away: drop its waiter (or give back a grant that won the race). */
    void cancel(Pending p) {
        p.cancelled = true;
        Long waiterId = p.waiterId;
        if (waiterId == null || pending.containsKey(p.requestId) == false) {
            return; // not queued yet (the acquire re-checks), or already answered
        }
        try {
            core.answer(NativeOp.CANCEL, p.partition, BridgeJson.toJson(BridgeField.WAITER_ID.of(waiterId)));
        } catch (LockPartitionUnavailableException e) {
            // A cancellation moves the partition's time on (and dropping a waiter can let the
            // ones behind it in): the core refuses it where this node's lease is not current. The
            // waiter stays queued, marked cancelled; a grant it still gets is given back at once,
            // and closing the partition or its wait running out answers it.
            logger.debug("waiter [{}] left queued: {}", waiterId, e.getMessage());
            return;
        } catch (LockException | NativeLockException | IllegalArgumentException e) {
            // The core resolved it first (granted, timed out, dropped with its partition): the
            // grant, if any, reaches deliverGrant, which gives it back.
            logger.debug("waiter [{}] was answered before its cancellation: {}", waiterId, e.getMessage());
        }
        if (p.op == NativeOp.WATCH && pending.remove(p.requestId) != null) {
            // A cancelled watch ends without an event (rust/lock-core/src/table/watch.rs).
            p.listener.onFailure(new TaskCancelledException("client went away before the watch ended"));
        }
    }

    /**
     * Delivers one event of the core to the request it answers (rust/lock-jni {@code
     * ops/envelope.rs}): its {@code body}, a grant's or a watch's end, as it is; else its
     * {@code error}. An event that answers no request (a lease or a session ran out) was logged
     * by the core. Answers whether it handed a grant to a waiting request (a hand-off, which
     * {@link LockMetrics} times).
     */
    boolean dispatch(Map<?, ?> event) {
        if (BridgeField.REQUEST_ID.in(event) instanceof Number requestId) {
            Pending p = pending.remove(requestId.longValue());
            if (BridgeField.GIVE_BACK.in(event) instanceof List<?> giveBack) {
                return deliverGrant(p, event, giveBack);
            } else if (p != null && BridgeField.BODY.in(event) instanceof Map<?, ?> body) {
                p.listener.onResponse(BridgeJson.object(body));
            } else if (p != null) {
                p.listener.onFailure(NativeErrors.eventFailure(event));
            }
        }
        return false;
    }

    private boolean deliverGrant(Pending p, Map<?, ?> event, List<?> giveBack) {
        if (p == null) {
            // Its request was already answered (its partition closed, or the node is closing):
            // the grant lives in a partition this node no longer serves.
            logger.debug("grant for an answered request ignored: {}", event);
            return false;
        }
        if (p.cancelled) {
            giveBack(p.partition, giveBack);
            p.listener.onFailure(new TaskCancelledException("client went away before the grant"));
            return false;
        }
        p.listener.onResponse(BridgeJson.object(BridgeField.BODY.in(event)));
        return true;
    }

    /** Releases a grant that reached a request whose client went away: the core's releases, as they are. */
    private void giveBack(int partition, List<?> releases) {
        for (Object r : releases) {
            @SuppressWarnings("unchecked")
            String release = BridgeJson.toJson((Map<String, ?>) r);
            try {
                core.answer(NativeOp.RELEASE, partition, release);
                logger.debug("released {} granted to a request whose client went away", release);
            } catch (LockNotHeldException e) {
                logger.debug("{} granted to a cancelled request had already ended", release);
            } catch (Exception e) {
                logger.warn(() -> "could not release " + release + " granted to a cancelled request", e);
            }
        }
    }
}
