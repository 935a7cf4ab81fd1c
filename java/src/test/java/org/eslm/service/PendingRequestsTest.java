package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.tasks.TaskCancelledException;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;
import org.eslm.core.LockNotHeldException;
import org.junit.jupiter.api.Test;

/**
 * The one path of a request that may wait ({@link PendingRequests#callWaitable}). A partition that
 * closes while a request's own call runs leaves that request to its caller, so each request is
 * answered once, and a call that panicked answers its panic rather than a retryable close
 * (docs/RELIABILITY.md "A panic in the core"); a cancelled waiter the core granted meanwhile gives
 * its grant back.
 */
class PendingRequestsTest {
    private final PendingRequests pending = new PendingRequests((op, partition, args) -> {
        throw new AssertionError("no core call expected");
    });

    private static ActionListener<Map<String, Object>> recording(List<Object> outcomes) {
        return ActionListener.wrap(outcomes::add, outcomes::add);
    }

    private static Map<String, Object> queuedAs(long waiterId) {
        return Map.of("result", Map.of("queued", Map.of("waiter_id", waiterId)));
    }

    @Test
    void aCloseDuringTheCallFailsAQueuedRequestOnceItsCallReturned() {
        List<Object> outcomes = new ArrayList<>();
        IllegalStateException closed = new IllegalStateException("partition closed");
        PendingRequests.Waitable call =
                pending.callWaitable(NativeOp.ACQUIRE, 0, null, recording(outcomes), BridgeField.QUEUED, id -> {
                    pending.failPartition(0, () -> closed);
                    assertEquals(List.of(), outcomes, "not answered while its call runs");
                    return queuedAs(5);
                });
        assertTrue(call.waits());
        assertEquals(List.of(closed), outcomes, "its waiter went with the partition");
        assertEquals(0, pending.size());
    }

    @Test
    void aCloseDuringACallAnsweredAtOnceIsLeftToTheCaller() {
        List<Object> outcomes = new ArrayList<>();
        PendingRequests.Waitable call =
                pending.callWaitable(NativeOp.ACQUIRE, 0, null, recording(outcomes), BridgeField.QUEUED, id -> {
                    pending.failPartition(0, () -> new IllegalStateException("partition closed"));
                    return Map.of("result", Map.of("granted", Map.of("key", "k")));
                });
        assertFalse(call.waits());
        assertEquals(Map.of("key", "k"), call.result().get("granted"));
        assertEquals(List.of(), outcomes, "the caller answers it (its commit fails)");
        assertEquals(0, pending.size());
    }

    @Test
    void aCallThatThrowsAnswersItsOwnFailureNotTheClose() {
        List<Object> outcomes = new ArrayList<>();
        IllegalStateException panic = new IllegalStateException("core panic");
        PendingRequests.Waitable call =
                pending.callWaitable(NativeOp.WATCH, 0, null, recording(outcomes), BridgeField.WATCHING, id -> {
                    pending.failPartition(0, () -> new IllegalStateException("partition closed"));
                    throw panic;
                });
        assertNull(call);
        assertEquals(List.of(panic), outcomes);
    }

    @Test
    void afterItsCallAQueuedRequestIsFailedByTheCloseOnce() {
        List<Object> outcomes = new ArrayList<>();
        AtomicLong requestId = new AtomicLong();
        pending.callWaitable(NativeOp.ACQUIRE, 0, null, recording(outcomes), BridgeField.QUEUED, id -> {
            requestId.set(id);
            return queuedAs(3);
        });
        IllegalStateException closed = new IllegalStateException("partition closed");

        pending.failPartition(1, () -> closed);
        assertEquals(List.of(), outcomes, "another partition's close leaves it alone");
        pending.failPartition(0, () -> closed);
        assertEquals(List.of(closed), outcomes);
        pending.dispatch(Map.of("event", "wait_timed_out", "request_id", requestId.get()));
        assertEquals(List.of(closed), outcomes, "answered once");
    }

    @Test
    void aCancelledWaiterThatTheCoreAlreadyGrantedIsAQuietNoOpAndItsGrantIsGivenBack() {
        List<String> calls = new ArrayList<>();
        PendingRequests racing = new PendingRequests((op, partition, args) -> {
            calls.add(op + " " + args);
            if (op == NativeOp.CANCEL) {
                throw new LockNotHeldException("no waiting request with id [22]", null, null);
            }
            return Map.of();
        });
        List<Object> outcomes = new ArrayList<>();
        PendingRequests.Waitable call = racing.callWaitable(
                NativeOp.ACQUIRE, 0, null, recording(outcomes), BridgeField.QUEUED, id -> queuedAs(22));

        racing.cancel(call.request()); // the core granted it a moment before: nothing to cancel, nothing thrown
        assertEquals(List.of("CANCEL {\"waiter_id\":22}"), calls);
        racing.dispatch(Map.of(
                "event",
                "granted",
                "request_id",
                call.request().requestId,
                "give_back",
                List.of(Map.of("key", "k", "owner", "o", "fencing_token", 7, "scope", "key"))));
        assertEquals(2, calls.size());
        assertTrue(calls.get(1).startsWith("RELEASE ") && calls.get(1).contains("\"fencing_token\":7"), calls.get(1));
        assertEquals(1, outcomes.size());
        assertTrue(outcomes.get(0) instanceof TaskCancelledException, outcomes.toString());
    }
}
