package org.eslm.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.tasks.TaskCancelledException;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLockException;
import org.eslm.bridge.NativeOp;
import org.eslm.settings.LockSettings;

/**
 * The one table from the core's stable error codes ({@code lock_core::ErrorCode}, the constants of
 * {@link NativeLockException}) to the Elasticsearch exceptions the REST layer renders (error
 * {@code type} and HTTP status, docs/API.md "Errors"). Every native failure goes through
 * {@link #toException}: a call that fails, and a waiter that fails later (the core attaches the
 * same outcome to the event as its {@code "error"} member).
 */
public final class NativeErrors {
    private NativeErrors() {}

    /** A failed bridge call as its Elasticsearch exception. */
    public static RuntimeException translate(NativeLockException e) {
        return toException(e.code(), e.getMessage(), BridgeJson.parse(e.detailsJson()));
    }

    /**
     * Maps a native lock outcome ({@code code}, {@code message} and the structured
     * {@code details} the core reports with it) to the exception the REST layer renders.
     */
    public static RuntimeException toException(int code, String message, Map<String, Object> details) {
        String key = String.valueOf(BridgeField.KEY.in(details));
        return switch (code) {
            case NativeLockException.CONFLICT ->
                new LockConflictException(
                        message,
                        key,
                        holderNames(BridgeField.HOLDERS.in(details)),
                        BridgeField.RETRY_AFTER_MS.in(details) == null
                                ? 0
                                : number(BridgeField.RETRY_AFTER_MS.in(details)));
            case NativeLockException.NOT_HELD ->
                new LockNotHeldException(message, key, String.valueOf(BridgeField.OWNER.in(details)), (String)
                        BridgeField.ENDED.in(details));
            case NativeLockException.WAIT_TIMEOUT ->
                new LockWaitTimeoutException(message, key, number(BridgeField.WAITED_MS.in(details)));
            case NativeLockException.DEADLOCK ->
                new DeadlockException(message, key, stringList(BridgeField.CYCLE.in(details)));
            case NativeLockException.SESSION_NOT_FOUND ->
                new SessionNotFoundException(message, String.valueOf(BridgeField.SESSION.in(details)));
            case NativeLockException.LIMIT_EXCEEDED -> limitExceeded(message, details);
            case NativeLockException.PARTITION_UNAVAILABLE ->
                new LockPartitionUnavailableException(message, number(BridgeField.RETRY_AFTER_MS.in(details)));
            // The caller cancelled its wait (its HTTP client went away): Elasticsearch's own type.
            case NativeLockException.CANCELLED -> new TaskCancelledException(message);
            case NativeLockException.SEMAPHORE_LIMIT_MISMATCH ->
                new SemaphoreLimitMismatchException(message, key, number(BridgeField.LIMIT.in(details)));
            case NativeLockException.GROUP_NOT_FOUND -> new GroupNotFoundException(message, key, null);
            case NativeLockException.GROUP_EXISTS -> new GroupAlreadyExistsException(message, key, null);
            case NativeLockException.GROUP_NOT_EMPTY -> new GroupNotEmptyException(message, key, null);
            case NativeLockException.MEMBER_EXISTS ->
                new MemberAlreadyJoinedException(message, key, String.valueOf(BridgeField.OWNER.in(details)));
            case NativeLockException.CORE_PANIC ->
                new LockCorePanicException(
                        message, number(BridgeField.PARTITION.in(details)), number(BridgeField.EPOCH.in(details)));
            default ->
                new ElasticsearchStatusException(
                        "unexpected lock core outcome [" + code + "]: " + message, RestStatus.INTERNAL_SERVER_ERROR);
        };
    }

    /**
     * A {@link Throwable} that is an {@link Error} thrown by a bridge call (the native side never
     * throws one; a JVM error such as a stack overflow can still arise in the call) as a 500 that
     * may travel to any Elasticsearch thread: Elasticsearch halts the JVM when an {@code Error}
     * reaches one of its threads, even as the cause of an exception, so the error is not attached
     * as the cause; its class, message and stack trace are carried over instead.
     */
    static RuntimeException fromError(NativeOp op, int partition, Error error) {
        ElasticsearchStatusException e = new ElasticsearchStatusException(
                "bridge call [" + op + "] on lock partition [" + partition + "] failed with [" + error + "]",
                RestStatus.INTERNAL_SERVER_ERROR);
        e.setStackTrace(error.getStackTrace());
        return e;
    }

    /**
     * The failure of a waiter that the core answered later with a non-grant event
     * ({@code wait_timed_out}, {@code deadlock_victim}, {@code cancelled}). The core attaches the
     * outcome as the event's {@code "error"} member, in the shape of a failed call's details, so
     * it goes through the same table as a failed call (the mapping is made once, in Rust:
     * {@code Event::outcome}).
     */
    public static RuntimeException eventFailure(Map<?, ?> event) {
        if (BridgeField.ERROR.in(event) instanceof Map<?, ?> error
                && BridgeField.CODE.in(error) instanceof Number code) {
            Map<String, Object> details = new java.util.LinkedHashMap<>();
            error.forEach((k, v) -> details.put(String.valueOf(k), v));
            return toException(code.intValue(), String.valueOf(BridgeField.MESSAGE.in(error)), details);
        }
        return new ElasticsearchStatusException(
                "lock event without an outcome: " + event, RestStatus.INTERNAL_SERVER_ERROR);
    }

    /**
     * A limit refusal, naming the setting that sets the limit (in the reason and as {@code limit}
     * in the error's metadata) rather than the core's field name.
     */
    private static LockLimitExceededException limitExceeded(String message, Map<String, Object> details) {
        String coreLimit = String.valueOf(BridgeField.LIMIT.in(details));
        String setting = LockSettings.limitSetting(coreLimit);
        // The keys-per-request limit is about the request's [locks] field: name it.
        String prefix = "max_keys_per_request".equals(coreLimit) ? "[locks] names too many keys: " : "";
        String reason = prefix + message.replace("[" + coreLimit + "]", "[" + setting + "]");
        return new LockLimitExceededException(reason, setting, number(BridgeField.MAX.in(details)));
    }

    private static long number(Object o) {
        return o instanceof Number n ? n.longValue() : -1;
    }

    private static List<String> holderNames(Object holders) {
        List<String> names = new ArrayList<>();
        if (holders instanceof List<?> list) {
            for (Object h : list) {
                names.add(String.valueOf(BridgeField.OWNER.in((Map<?, ?>) h)));
            }
        }
        return names;
    }

    private static List<String> stringList(Object o) {
        List<String> out = new ArrayList<>();
        if (o instanceof List<?> list) {
            list.forEach(v -> out.add(String.valueOf(v)));
        }
        return out;
    }
}
