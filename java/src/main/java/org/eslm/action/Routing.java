package org.eslm.action;

import java.util.Map;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.tasks.Task;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;
import org.eslm.core.LockException;
import org.eslm.core.LockNotHeldException;
import org.eslm.core.SessionNotFoundException;
import org.eslm.service.SessionIds;

/**
 * One request being routed by this (coordinating) node ({@link PartitionRouter}), with its budget
 * for finding an owner ({@code deadline}, {@link System#nanoTime()}), when it started (a waiter
 * re-sent queues with the wait it has left), and the answer of an ending change an owner applied
 * but could not commit ({@code applied}).
 */
record Routing(
        Task task,
        LockOpRequest request,
        ActionListener<LockOpResponse> listener,
        long deadline,
        long started,
        Map<String, Object> applied) {

    /** A request starting its routing now, with {@code budgetMs} to find an owner. */
    static Routing start(Task task, LockOpRequest request, ActionListener<LockOpResponse> listener, long budgetMs) {
        long now = System.nanoTime();
        return new Routing(
                task,
                request,
                listener,
                now + TimeValue.timeValueMillis(budgetMs).nanos(),
                now,
                null);
    }

    /** Milliseconds of the budget left (negative once spent). */
    long leftMs() {
        return TimeValue.nsecToMSec(deadline - System.nanoTime());
    }

    /** Milliseconds of the request's own wait left: 0 for a request that does not wait. */
    long waitLeftMs() {
        if (request.waits() == false) {
            return 0;
        }
        return Math.max(0, request.waitMs() - TimeValue.nsecToMSec(System.nanoTime() - started));
    }

    /**
     * This routing after an owner applied its ending change but could not commit it: the retry
     * names the grant that change ended (a release without a token must not end a newer grant of
     * the same owner), and {@code answer} is kept for {@link #endedBefore}.
     */
    Routing afterApplied(Map<String, Object> answer) {
        LockOpRequest retry = request;
        if (request.op() == NativeOp.RELEASE
                && request.opArgs().containsKey(BridgeField.FENCING_TOKEN.key()) == false
                && BridgeField.FENCING_TOKEN.in(answer) != null) {
            retry = request.withOpArg(BridgeField.FENCING_TOKEN.key(), BridgeField.FENCING_TOKEN.in(answer));
        }
        return new Routing(task, retry, listener, deadline, started, answer);
    }

    /**
     * Whether {@code failure} says there is nothing left to end because an earlier attempt's
     * change, applied but not committed, was handed over with the partition.
     */
    boolean endedBefore(LockException failure) {
        return applied != null
                && (failure instanceof LockNotHeldException || failure instanceof SessionNotFoundException);
    }

    /**
     * The request for this attempt at {@code partition}, with the wait it has left. The session
     * id is checked here (the owner passes the core its id without the partition).
     */
    LockOpRequest routedFor(int partition) {
        if (request.session() != null && request.op() != NativeOp.SESSION_CREATE) {
            SessionIds.local(request.session());
        }
        long waitLeft = request.waitMs();
        if (waitLeft != LockOpRequest.NO_WAIT) {
            long spentMs = TimeValue.nsecToMSec(System.nanoTime() - started);
            waitLeft = Math.max(0, waitLeft - spentMs);
        }
        return request.routed(partition, waitLeft);
    }
}
