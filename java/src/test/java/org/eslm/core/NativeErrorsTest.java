package org.eslm.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.tasks.TaskCancelledException;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.NativeLockException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

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
        record Case(
                int code,
                Map<String, Object> details,
                String type,
                RestStatus status,
                String metadata,
                List<String> value) {}
        for (Case c : List.of(
                new Case(
                        NativeLockException.CONFLICT,
                        Map.of("key", "k", "holders", List.of(Map.of("owner", "a"))),
                        "lock_conflict_exception",
                        RestStatus.CONFLICT,
                        "es.holders",
                        List.of("a")),
                new Case(
                        NativeLockException.NOT_HELD,
                        Map.of("key", "k", "owner", "b"),
                        "lock_not_held_exception",
                        RestStatus.NOT_FOUND,
                        "es.owner",
                        List.of("b")),
                new Case(
                        NativeLockException.WAIT_TIMEOUT,
                        Map.of("key", "k", "waited_ms", 7),
                        "lock_wait_timeout_exception",
                        RestStatus.CONFLICT,
                        "es.waited_ms",
                        List.of("7")),
                new Case(
                        NativeLockException.DEADLOCK,
                        Map.of("key", "k", "cycle", List.of("a", "b")),
                        "deadlock_exception",
                        RestStatus.CONFLICT,
                        "es.cycle",
                        List.of("a", "b")),
                new Case(
                        NativeLockException.SESSION_NOT_FOUND,
                        Map.of("session", "s"),
                        "session_not_found_exception",
                        RestStatus.NOT_FOUND,
                        "es.session",
                        List.of("s")),
                new Case(
                        NativeLockException.LIMIT_EXCEEDED,
                        Map.of("limit", "max_waiters_per_key", "max", 3),
                        "lock_limit_exceeded_exception",
                        RestStatus.TOO_MANY_REQUESTS,
                        "es.max",
                        List.of("3")),
                new Case(
                        NativeLockException.LIMIT_EXCEEDED,
                        Map.of("limit", "max_memory", "max", 1024),
                        "lock_limit_exceeded_exception",
                        RestStatus.TOO_MANY_REQUESTS,
                        "es.limit",
                        List.of("locks.limits.max_memory")),
                new Case(
                        NativeLockException.LIMIT_EXCEEDED,
                        Map.of("limit", "max_waiters_per_key", "max", 3),
                        "lock_limit_exceeded_exception",
                        RestStatus.TOO_MANY_REQUESTS,
                        "es.limit",
                        List.of("locks.max_waiters")),
                new Case(
                        NativeLockException.PARTITION_UNAVAILABLE,
                        Map.of("retry_after_ms", 500),
                        "lock_partition_unavailable_exception",
                        RestStatus.SERVICE_UNAVAILABLE,
                        "es.retry_after_ms",
                        List.of("500")),
                new Case(
                        NativeLockException.SEMAPHORE_LIMIT_MISMATCH,
                        Map.of("key", "api", "limit", 4, "requested", 8),
                        "semaphore_limit_mismatch_exception",
                        RestStatus.CONFLICT,
                        "es.limit",
                        List.of("4")),
                new Case(
                        NativeLockException.GROUP_NOT_FOUND,
                        Map.of("key", "workers"),
                        "group_not_found_exception",
                        RestStatus.NOT_FOUND,
                        "es.group",
                        List.of("workers")),
                new Case(
                        NativeLockException.GROUP_EXISTS,
                        Map.of("key", "workers"),
                        "group_already_exists_exception",
                        RestStatus.CONFLICT,
                        "es.group",
                        List.of("workers")),
                new Case(
                        NativeLockException.GROUP_NOT_EMPTY,
                        Map.of("key", "workers"),
                        "group_not_empty_exception",
                        RestStatus.CONFLICT,
                        "es.group",
                        List.of("workers")),
                new Case(
                        NativeLockException.MEMBER_EXISTS,
                        Map.of("key", "workers", "owner", "w-1"),
                        "member_already_joined_exception",
                        RestStatus.CONFLICT,
                        "es.member",
                        List.of("w-1")),
                new Case(
                        NativeLockException.CORE_PANIC,
                        Map.of("partition", 3, "epoch", 2),
                        "lock_core_panic_exception",
                        RestStatus.INTERNAL_SERVER_ERROR,
                        "es.partition",
                        List.of("3")))) {
            ElasticsearchException e = mapped(c.code, c.details);
            assertEquals(c.type, ElasticsearchException.getExceptionName(e), "code " + c.code);
            assertEquals(c.status, e.status(), "code " + c.code);
            assertEquals(c.value, e.getMetadata(c.metadata), "code " + c.code);
        }
    }

    @Test
    void aCorePanicNamesItsPartitionAndEpochAndSurvivesTheTripToAnotherNode() {
        LockCorePanicException e = assertInstanceOf(
                LockCorePanicException.class,
                NativeErrors.toException(NativeLockException.CORE_PANIC, "boom", Map.of("partition", 3, "epoch", 2)));
        assertEquals(3, e.partition());
        assertEquals(2, e.epoch());
        LockCorePanicException rebuilt =
                assertInstanceOf(LockCorePanicException.class, LockException.rebuild(LockException.describe(e)));
        assertEquals(List.of("3"), rebuilt.getMetadata("es.partition"));
        assertEquals(RestStatus.INTERNAL_SERVER_ERROR, rebuilt.status());
        // A panic outside any partition (the bridge sends null): no partition to reopen.
        java.util.HashMap<String, Object> none = new java.util.HashMap<>();
        none.put("partition", null);
        none.put("epoch", null);
        LockCorePanicException outside = assertInstanceOf(
                LockCorePanicException.class, NativeErrors.toException(NativeLockException.CORE_PANIC, "boom", none));
        assertEquals(-1, outside.partition());
    }

    @Test
    void theKeysPerRequestLimitNamesTheLocksField() {
        ElasticsearchException e =
                mapped(NativeLockException.LIMIT_EXCEEDED, Map.of("limit", "max_keys_per_request", "max", 2));
        assertTrue(e.getMessage().startsWith("[locks] names too many keys: "), e.getMessage());
    }

    @Test
    void anUnknownCodeIsAnInternalError() {
        for (int code : new int[] {NativeLockException.INVALID_ARGUMENT, NativeLockException.INTERNAL, 42}) {
            ElasticsearchStatusException e =
                    assertInstanceOf(ElasticsearchStatusException.class, NativeErrors.toException(code, "m", Map.of()));
            assertEquals(RestStatus.INTERNAL_SERVER_ERROR, e.status());
            assertTrue(e.getMessage().contains("[" + code + "]"), e.getMessage());
        }
    }

    /** Events exactly as the core emits them (rust/lock-jni tests: each waiter-completing event carries its error). */
    @Test
    void waiterEventsFailTheirRequestTypedThroughTheOneTable() {
        LockWaitTimeoutException timeout =
                assertInstanceOf(LockWaitTimeoutException.class, NativeErrors.eventFailure(BridgeJson.parse("""
            {"event":"wait_timed_out","waiter_id":2,"request_id":9,"owner":"c","key":"k","waited_ms":61,
             "error":{"code":4,"key":"k","message":"[c] waited 61ms for lock [k] without getting it","owner":"c","waited_ms":61}}""")));
        assertEquals(List.of("61"), timeout.getMetadata("es.waited_ms"));
        assertEquals("[c] waited 61ms for lock [k] without getting it", timeout.getMessage());
        DeadlockException deadlock =
                assertInstanceOf(DeadlockException.class, NativeErrors.eventFailure(BridgeJson.parse("""
            {"event":"deadlock_victim","waiter_id":1,"request_id":3,"owner":"a","key":"k","cycle":["a","b"],
             "error":{"code":5,"cycle":["a","b"],"key":"k","message":"victim","owner":"a"}}""")));
        assertEquals(List.of("a", "b"), deadlock.getMetadata("es.cycle"));
        // The session a waiter lost is named (it used to render as "null").
        SessionNotFoundException session =
                assertInstanceOf(SessionNotFoundException.class, NativeErrors.eventFailure(BridgeJson.parse("""
            {"event":"cancelled","waiter_id":1,"request_id":7,"owner":"b","key":"k","reason":"session_ended","session":"1099511627777",
             "error":{"code":6,"message":"session [1099511627777] does not exist or has expired","session":"1099511627777"}}""")));
        assertEquals(List.of("1099511627777"), session.getMetadata("es.session"));
        assertInstanceOf(TaskCancelledException.class, NativeErrors.eventFailure(BridgeJson.parse("""
            {"event":"cancelled","waiter_id":3,"request_id":11,"owner":"d","key":"k","reason":"cancelled",
             "error":{"code":9,"key":"k","message":"[d]'s wait for lock [k] was cancelled: cancelled","owner":"d","reason":"cancelled"}}""")));
        ElasticsearchStatusException noOutcome = assertInstanceOf(
                ElasticsearchStatusException.class,
                NativeErrors.eventFailure(BridgeJson.parse("{\"event\":\"wait_timed_out\",\"request_id\":1}")));
        assertEquals(RestStatus.INTERNAL_SERVER_ERROR, noOutcome.status());
    }
}
