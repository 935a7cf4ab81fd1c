package org.eslm.service;

import java.util.Map;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.tasks.Task;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.core.LockPartitionUnavailableException;

/**
 * Running one operation on the core, once {@link LockService} let it in: most are answered at
 * once (a change once it is committed); acquires and watches may instead be registered with
 * {@link PendingRequests} and answered by a later event of the core, no thread waiting meanwhile
 * (docs/ARCHITECTURE.md "The path of one request", "Waiting without threads, and time").
 */
final class Operations {
    private final PartitionAdmission admission;
    private final Deliveries deliveries;

    Operations(PartitionAdmission admission, Deliveries deliveries) {
        this.admission = admission;
        this.deliveries = deliveries;
    }

    /** An acquire ({@code ACQUIRE} or {@code ACQUIRE_MANY}): granted once committed, or queued. */
    void acquire(
            NativeOp op,
            int partition,
            Map<String, Object> args,
            Task task,
            ActionListener<Map<String, Object>> listener) {
        long started = deliveries.clock();
        PendingRequests.Waitable call = deliveries
                .pending()
                .callWaitable(
                        op, partition, task, listener, BridgeField.QUEUED, id -> callWith(op, partition, args, id));
        if (call == null) {
            deliveries.tickSoon();
        } else if (call.waits()) {
            deliveries.handleAfterCommit(partition, call.envelope(), started);
        } else {
            // Replicated, a partition closed meanwhile fails the commit (retryable).
            Map<String, Object> body = BridgeJson.object(BridgeField.GRANTED.in(call.result()));
            deliveries.afterCommit(partition, listener.delegateFailureAndWrap((l, ignored) -> {
                deliveries.handle(call.envelope(), started);
                l.onResponse(body);
            }));
        }
    }

    /**
     * A watch on one lock (docs/API.md "Watch a lock"): answered at once when the lock with the
     * token is not held (or held and the watch does not wait), else registered like a queued
     * acquire, and answered by its {@code watch_fired} or {@code watch_timed_out} event. It
     * changes no lock, so nothing waits for a commit but the delivery of the events its call
     * caused (the clock moved on).
     */
    void watch(int partition, Map<String, Object> args, Task task, ActionListener<Map<String, Object>> listener) {
        PendingRequests.Waitable call = deliveries
                .pending()
                .callWaitable(
                        NativeOp.WATCH,
                        partition,
                        task,
                        listener,
                        BridgeField.WATCHING,
                        id -> callWith(NativeOp.WATCH, partition, args, id));
        if (call == null) {
            return;
        }
        if (call.waits() == false) {
            Map<String, Object> body = BridgeJson.object(BridgeField.ANSWERED.in(call.result()));
            deliveries.afterCommit(partition, listener.map(ignored -> body)); // the end it reports is committed
        }
        deliveries.handleAfterCommit(partition, call.envelope());
    }

    /** An operation answered at once: a read as it stands, a change once it is committed. */
    void run(NativeOp op, int partition, Map<String, Object> args, ActionListener<Map<String, Object>> listener) {
        long started = deliveries.clock(); // a release, a session's end, a downgrade: the hand-offs it causes
        Map<String, Object> envelope;
        Map<String, Object> body;
        try {
            envelope = admission.callRouted(op, partition, BridgeJson.toJson(args));
            body = BridgeJson.object(BridgeField.RESULT.in(envelope)); // the REST body, as the core wrote it
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        if (partition == NativeLockCore.ALL_PARTITIONS) {
            deliveries.handle(envelope, started);
            listener.onResponse(body);
            return;
        }
        // A read waits for the commit too: it may show a change not yet on every copy, which
        // nobody may learn of before it is (docs/ARCHITECTURE.md "Replication").
        deliveries.afterCommit(
                partition,
                ActionListener.wrap(
                        ignored -> {
                            deliveries.handle(envelope, started);
                            listener.onResponse(body);
                        },
                        e -> listener.onFailure(uncommitted(op, body, e))));
    }

    /**
     * The failure of a change whose commit failed. An ending change (release, session end) was
     * applied here and may reach the next owner with a planned move's hand-over: its answer goes
     * along, so that a retry finding nothing left to end can answer it
     * ({@link LockPartitionUnavailableException#withAppliedAnswer}).
     */
    private static Exception uncommitted(NativeOp op, Map<String, Object> body, Exception e) {
        boolean ending = op == NativeOp.RELEASE || op == NativeOp.SESSION_END;
        return ending && e instanceof LockPartitionUnavailableException unavailable
                ? unavailable.withAppliedAnswer(body)
                : e;
    }

    /** Runs a request that may wait, carrying the id its later event will name. */
    private Map<String, Object> callWith(NativeOp op, int partition, Map<String, Object> args, long requestId) {
        BridgeField.REQUEST_ID.put(args, requestId);
        return admission.callRouted(op, partition, BridgeJson.toJson(args));
    }
}
