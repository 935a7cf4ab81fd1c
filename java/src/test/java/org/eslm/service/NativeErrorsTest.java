package org.eslm.service;

import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.tasks.TaskCancelledException;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.NativeLockException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one code -> exception table, and the waiter-event failures next to it. */
class NativeErrorsTest {
    @BeforeAll
    static void setUp() {
        NativeTestSupport.setUp();
    }

    private static ElasticsearchException mapped(int code, Map<String, Object> details) {
        return assertInstanceOf(ElasticsearchException.class, NativeErrors.toException(code, "m", details));
    }

    @Test
    void everyLockOutcomeHasItsTypeStatusAndDetails() {
        record Case(int code, Map<String, Object> details, String type, RestStatus status, String metadata, List<String> value) {}
        for (Case c : List.of(
            new Case(NativeLockException.CONFLICT, Map.of("key", "k", "holders", List.of(Map.of("owner", "a"))),
                "lock_conflict_exception", RestStatus.CONFLICT, "es.holders", List.of("a")),
            new Case(NativeLockException.NOT_HELD, Map.of("key", "k", "owner", "b"),
                "lock_not_held_exception", RestStatus.NOT_FOUND, "es.owner", List.of("b")),
            new Case(NativeLockException.WAIT_TIMEOUT, Map.of("key", "k", "waited_ms", 7),
                "lock_wait_timeout_exception", RestStatus.CONFLICT, "es.waited_ms", List.of("7")),
            new Case(NativeLockException.DEADLOCK, Map.of("key", "k", "cycle", List.of("a", "b")),
                "deadlock_exception", RestStatus.CONFLICT, "es.cycle", List.of("a", "b")),
            new Case(NativeLockException.SESSION_NOT_FOUND, Map.of("session", "s"),
                "session_not_found_exception", RestStatus.NOT_FOUND, "es.session", List.of("s")),
            new Case(NativeLockException.LIMIT_EXCEEDED, Map.of("limit", "max_waiters_per_key", "max", 3),
                "lock_limit_exceeded_exception", RestStatus.TOO_MANY_REQUESTS, "es.max", List.of("3")),
            new Case(NativeLockException.PARTITION_UNAVAILABLE, Map.of("retry_after_ms", 500),
                "lock_partition_unavailable_exception", RestStatus.SERVICE_UNAVAILABLE, "es.retry_after_ms", List.of("500"))
        )) {
            ElasticsearchException e = mapped(c.code, c.details);
            assertEquals(c.type, ElasticsearchException.getExceptionName(e), "code " + c.code);
            assertEquals(c.status, e.status(), "code " + c.code);
            assertEquals(c.value, e.getMetadata(c.metadata), "code " + c.code);
        }
    }

    @Test
    void theKeysPerRequestLimitNamesTheLocksField() {
        ElasticsearchException e = mapped(NativeLockException.LIMIT_EXCEEDED, Map.of("limit", "max_keys_per_request", "max", 2));
        assertTrue(e.getMessage().startsWith("[locks] names too many keys: "), e.getMessage());
    }

    @Test
    void anUnknownCodeIsAnInternalError() {
        for (int code : new int[] { NativeLockException.INVALID_ARGUMENT, NativeLockException.INTERNAL, 42 }) {
            ElasticsearchStatusException e = assertInstanceOf(ElasticsearchStatusException.class, NativeErrors.toException(code, "m", Map.of()));
            assertEquals(RestStatus.INTERNAL_SERVER_ERROR, e.status());
            assertTrue(e.getMessage().contains("[" + code + "]"), e.getMessage());
        }
    }

    @Test
    void waiterEventsFailTheirRequestTyped() {
        LockWaitTimeoutException timeout = assertInstanceOf(
            LockWaitTimeoutException.class,
            NativeErrors.waitFailure("wait_timed_out", Map.of("key", "k", "owner", "a", "waited_ms", 250))
        );
        assertEquals(List.of("250"), timeout.getMetadata("es.waited_ms"));
        DeadlockException deadlock = assertInstanceOf(
            DeadlockException.class,
            NativeErrors.waitFailure("deadlock_victim", Map.of("key", "k", "owner", "a", "cycle", List.of("a", "b")))
        );
        assertEquals(List.of("a", "b"), deadlock.getMetadata("es.cycle"));
        assertInstanceOf(
            SessionNotFoundException.class,
            NativeErrors.waitFailure("cancelled", Map.of("key", "k", "owner", "a", "reason", "session_ended", "session", "s"))
        );
        assertInstanceOf(TaskCancelledException.class, NativeErrors.waitFailure("cancelled", Map.of("key", "k", "reason", "client")));
        ElasticsearchStatusException unknown = assertInstanceOf(
            ElasticsearchStatusException.class,
            NativeErrors.waitFailure("surprise", Map.of())
        );
        assertEquals(RestStatus.INTERNAL_SERVER_ERROR, unknown.status());
    }
}
