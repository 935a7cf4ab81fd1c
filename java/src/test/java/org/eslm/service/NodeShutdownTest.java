package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.tasks.TaskCancelledException;
import org.eslm.NativeTestSupport;
import org.eslm.core.LockPartitionUnavailableException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The answers of a node's lock requests when it begins to shut down (docs/RELIABILITY.md "Stopping a node"). */
class NodeShutdownTest {
    @BeforeAll
    static void setUp() {
        NativeTestSupport.setUp(); // Elasticsearch's exceptions need its logging configured
    }

    /** Every answer a listener got, in order. */
    private static final class Answers implements ActionListener<String> {
        final List<Object> got = new ArrayList<>();

        @Override
        public void onResponse(String response) {
            got.add(response);
        }

        @Override
        public void onFailure(Exception e) {
            got.add(e);
        }
    }

    private static void assertShutdown503(Object answer) {
        LockPartitionUnavailableException e = assertInstanceOf(LockPartitionUnavailableException.class, answer);
        assertEquals(RestStatus.SERVICE_UNAVAILABLE, e.status());
        assertEquals("lock_partition_unavailable_exception", ElasticsearchException.getExceptionName(e));
        assertEquals(List.of("node-x"), e.getMetadata("es.node_shutting_down"));
        assertEquals(List.of("0"), e.getMetadata("es.retry_after_ms"));
        assertEquals("node [node-x] is shutting down; send the request to another node", e.getMessage());
    }

    @Test
    void beginAnswersEveryTrackedRequestOnceAfterItsCleanUp() {
        NodeShutdown shutdown = new NodeShutdown(() -> "node-x");
        Answers first = new Answers();
        Answers second = new Answers();
        List<String> order = new ArrayList<>();
        ActionListener<String> one = shutdown.track(first, () -> order.add("cleaned " + first.got.size()));
        ActionListener<String> two = shutdown.track(second, () -> {});
        assertNotNull(one);
        assertNotNull(two);
        assertEquals(2, shutdown.inFlight());

        assertEquals(2, shutdown.begin());
        assertTrue(shutdown.begun());
        assertEquals(List.of("cleaned 0"), order, "clean-up (cancelling the task) runs before the answer");
        assertEquals(1, first.got.size());
        assertShutdown503(first.got.get(0));
        assertShutdown503(second.got.get(0));
        assertEquals(0, shutdown.inFlight());

        // Late answers (a grant or a cancellation racing the shutdown) change nothing.
        one.onResponse("granted");
        two.onFailure(new TaskCancelledException("cancelled"));
        assertEquals(1, first.got.size());
        assertEquals(1, second.got.size());
        assertEquals(0, shutdown.begin(), "idempotent");
    }

    @Test
    void whatAnswersARequestDuringItsCleanUpBecomesTheShutdownAnswer() {
        NodeShutdown shutdown = new NodeShutdown(() -> "node-x");
        Answers answers = new Answers();
        List<ActionListener<String>> tracked = new ArrayList<>();
        // Cancelling the task answers the request at once (its local waiter is dropped): the
        // client must still learn that the node is shutting down.
        tracked.add(
                shutdown.track(answers, () -> tracked.get(0).onFailure(new TaskCancelledException("task cancelled"))));
        shutdown.begin();
        assertEquals(1, answers.got.size());
        assertShutdown503(answers.got.get(0));
    }

    @Test
    void requestsAnsweredBeforeTheShutdownAreForgotten() {
        NodeShutdown shutdown = new NodeShutdown(() -> "node-x");
        Answers answers = new Answers();
        AtomicInteger cleanUps = new AtomicInteger();
        shutdown.track(answers, cleanUps::incrementAndGet).onResponse("granted");
        assertEquals(0, shutdown.inFlight());
        assertEquals(0, shutdown.begin());
        assertEquals(List.of("granted"), answers.got);
        assertEquals(0, cleanUps.get());
    }

    @Test
    void aRequestTakenAfterTheShutdownBeganIsRefusedAtOnce() {
        NodeShutdown shutdown = new NodeShutdown(() -> "node-x");
        shutdown.begin();
        Answers answers = new Answers();
        AtomicInteger cleanUps = new AtomicInteger();
        assertNull(shutdown.track(answers, cleanUps::incrementAndGet));
        assertEquals(1, answers.got.size());
        assertShutdown503(answers.got.get(0));
        assertEquals(1, cleanUps.get());
        assertEquals(0, shutdown.inFlight());
        assertFalse(answers.got.get(0) instanceof TaskCancelledException);
    }
}
