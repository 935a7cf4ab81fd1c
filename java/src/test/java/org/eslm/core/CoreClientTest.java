package org.eslm.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.rest.RestStatus;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.NativeLockException;
import org.eslm.bridge.NativeOp;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Nothing of type {@link Error} leaves {@link CoreClient} (Elasticsearch halts the JVM when one
 * reaches its threads, even as a cause), and a panic in the core is the typed 500 that the
 * cluster code is told of (docs/RELIABILITY.md "A panic in the core").
 */
class CoreClientTest {
    @BeforeAll
    static void setUp() {
        NativeTestSupport.setUp();
    }

    private static CoreClient throwing(Supplier<? extends Throwable> failure) {
        return new CoreClient(
                (op, partition, args) -> {
                    Throwable t = failure.get();
                    if (t instanceof Error e) {
                        throw e;
                    }
                    throw (RuntimeException) t;
                },
                () -> {});
    }

    @Test
    void anErrorFromTheBridgeBecomesA500WithNoErrorInItsCauses() {
        List<Supplier<Error>> errors = List.of(
                () -> new AssertionError("native bug"), StackOverflowError::new, () -> new OutOfMemoryError("x"));
        for (Supplier<Error> error : errors) {
            try (CoreClient client = throwing(error)) {
                RuntimeException e = assertThrows(RuntimeException.class, () -> client.call(NativeOp.ACQUIRE, 4, "{}"));
                ElasticsearchStatusException status = assertInstanceOf(ElasticsearchStatusException.class, e);
                assertEquals(RestStatus.INTERNAL_SERVER_ERROR, status.status());
                assertTrue(
                        e.getMessage().contains("[ACQUIRE]") && e.getMessage().contains("[4]"), e.getMessage());
                for (Throwable t = e; t != null; t = t.getCause()) {
                    assertTrue(t instanceof Error == false, "an Error in the causes: " + t);
                    for (Throwable s : t.getSuppressed()) {
                        assertTrue(s instanceof Error == false, "an Error suppressed: " + s);
                    }
                }
                assertNull(e.getCause());
            }
        }
    }

    @Test
    void aCorePanicIsTheTypedExceptionAndTheListenerLearnsItsPartitionAndEpoch() {
        List<LockCorePanicException> told = new ArrayList<>();
        try (CoreClient client = throwing(() -> new NativeLockException(
                NativeLockException.CORE_PANIC,
                "the lock core panicked in lock partition [2]",
                "{\"code\":10,\"message\":\"m\",\"partition\":2,\"epoch\":5}"))) {
            client.onCorePanic(told::add);
            LockCorePanicException e =
                    assertThrows(LockCorePanicException.class, () -> client.call(NativeOp.RENEW, 2, "{}"));
            assertEquals(2, e.partition());
            assertEquals(List.of(e), told);
            assertEquals(5, told.get(0).epoch());
        }
    }

    @Test
    void aListenerThatFailsDoesNotChangeTheAnswer() {
        try (CoreClient client = throwing(() -> new NativeLockException(
                NativeLockException.CORE_PANIC, "m", "{\"code\":10,\"message\":\"m\",\"partition\":0,\"epoch\":1}"))) {
            client.onCorePanic(e -> {
                throw new IllegalStateException("listener broke");
            });
            assertThrows(LockCorePanicException.class, () -> client.call(NativeOp.ACQUIRE, 0, "{}"));
        }
    }
}
