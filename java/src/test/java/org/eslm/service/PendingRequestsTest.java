package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.elasticsearch.action.ActionListener;
import org.eslm.bridge.NativeOp;
import org.junit.jupiter.api.Test;

/**
 * A partition that closes while a request's own call runs leaves that request to its caller, so
 * each request is answered once, and a call that panicked answers its panic rather than a
 * retryable close (docs/RELIABILITY.md "A panic in the core").
 */
class PendingRequestsTest {
    private final PendingRequests pending = new PendingRequests(
            (op, partition, args) -> {
                throw new AssertionError("no core call expected");
            },
            partition -> true);

    private static ActionListener<Map<String, Object>> recording(List<Object> outcomes) {
        return ActionListener.wrap(outcomes::add, outcomes::add);
    }

    @Test
    void aCloseDuringTheCallIsLeftToTheCaller() {
        List<Object> outcomes = new ArrayList<>();
        PendingRequests.Pending p = pending.register(NativeOp.ACQUIRE, 0, recording(outcomes));
        IllegalStateException closed = new IllegalStateException("partition closed");

        pending.failPartition(0, () -> closed);
        assertEquals(List.of(), outcomes, "not answered while its call runs");
        assertSame(closed, pending.callReturned(p), "the caller learns of the close");
        assertTrue(pending.remove(p), "and still answers the request itself");
        assertEquals(List.of(), outcomes);
    }

    @Test
    void afterItsCallAQueuedRequestIsFailedByTheClose() {
        List<Object> outcomes = new ArrayList<>();
        PendingRequests.Pending p = pending.register(NativeOp.ACQUIRE, 0, recording(outcomes));
        assertNull(pending.callReturned(p), "nothing closed during the call");
        IllegalStateException closed = new IllegalStateException("partition closed");

        pending.failPartition(1, () -> closed);
        assertEquals(List.of(), outcomes, "another partition's close leaves it alone");
        pending.failPartition(0, () -> closed);
        assertEquals(List.of(closed), outcomes);
        assertFalse(pending.remove(p), "answered once: the caller no longer answers it");
    }

    @Test
    void aCancelledWaiterThatTheCoreAlreadyGrantedIsAQuietNoOpAndItsGrantIsGivenBack() {
        List<String> calls = new ArrayList<>();
        PendingRequests racing = new PendingRequests(
                (op, partition, args) -> {
                    calls.add(op + " " + args);
                    if (op == NativeOp.CANCEL) {
                        throw new LockNotHeldException("no waiting request with id [22]", null, null);
                    }
                    return Map.of();
                },
                partition -> true);
        List<Object> outcomes = new ArrayList<>();
        PendingRequests.Pending p = racing.register(NativeOp.ACQUIRE, 0, recording(outcomes));
        assertNull(racing.callReturned(p));
        racing.queued(p, 22, null);

        racing.cancel(p); // the core granted it a moment before: nothing to cancel, nothing thrown
        assertEquals(List.of("CANCEL {\"waiter_id\":22}"), calls);
        racing.dispatch(Map.of(
                "event",
                "granted",
                "request_id",
                p.requestId,
                "grants",
                List.of(Map.of("key", "k", "owner", "o", "fencing_token", 7, "scope", "key"))));
        assertEquals(2, calls.size());
        assertTrue(calls.get(1).startsWith("RELEASE ") && calls.get(1).contains("\"fencing_token\":7"), calls.get(1));
        assertEquals(1, outcomes.size());
        assertTrue(outcomes.get(0) instanceof org.elasticsearch.tasks.TaskCancelledException, outcomes.toString());
    }
}
