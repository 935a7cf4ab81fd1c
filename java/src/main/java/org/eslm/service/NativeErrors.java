package org.eslm.service;

import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.tasks.TaskCancelledException;
import org.eslm.bridge.NativeLockException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The one table from the core's stable error codes ({@code lock_core::ErrorCode}, the constants of
 * {@link NativeLockException}) to the Elasticsearch exceptions the REST layer renders (error
 * {@code type} and HTTP status, docs/API.md "Errors"). Every native failure goes through
 * {@link #toException}: a call that fails, and (once the core attaches its {@code "error"} member
 * to events) a waiter that fails later.
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
        String key = String.valueOf(details.get("key"));
        return switch (code) {
            case NativeLockException.CONFLICT -> new LockConflictException(message, key, holderNames(details.get("holders")));
            case NativeLockException.NOT_HELD -> new LockNotHeldException(message, key, String.valueOf(details.get("owner")));
            case NativeLockException.WAIT_TIMEOUT -> new LockWaitTimeoutException(message, key, number(details.get("waited_ms")));
            case NativeLockException.DEADLOCK -> new DeadlockException(message, key, stringList(details.get("cycle")));
            case NativeLockException.SESSION_NOT_FOUND -> new SessionNotFoundException(message, String.valueOf(details.get("session")));
            case NativeLockException.LIMIT_EXCEEDED -> new LockLimitExceededException(
                // The keys-per-request limit is about the request's [locks] field: name it.
                ("max_keys_per_request".equals(details.get("limit")) ? "[locks] names too many keys: " : "") + message,
                String.valueOf(details.get("limit")),
                number(details.get("max"))
            );
            case NativeLockException.PARTITION_UNAVAILABLE -> new LockPartitionUnavailableException(
                message, number(details.get("retry_after_ms"))
            );
            default -> new ElasticsearchStatusException(
                "unexpected lock core outcome [" + code + "]: " + message,
                RestStatus.INTERNAL_SERVER_ERROR
            );
        };
    }

    /**
     * The failure of a waiter the core answered later with a non-grant event ({@code type}:
     * {@code wait_timed_out}, {@code deadlock_victim}, {@code cancelled}). Worded as the events
     * are today; to be replaced by {@link #toException} on the event's {@code "error"} member.
     */
    static Exception waitFailure(String type, Map<?, ?> event) {
        String key = String.valueOf(event.get("key"));
        String owner = String.valueOf(event.get("owner"));
        return switch (type) {
            case "wait_timed_out" -> new LockWaitTimeoutException(
                "[" + owner + "] waited " + event.get("waited_ms") + "ms for lock [" + key + "] without being granted",
                key,
                ((Number) event.get("waited_ms")).longValue()
            );
            case "deadlock_victim" -> new DeadlockException(
                "[" + owner + "] waiting for [" + key + "] was chosen as the victim of deadlock " + event.get("cycle"),
                key,
                stringList(event.get("cycle"))
            );
            case "cancelled" -> switch (String.valueOf(event.get("reason"))) {
                case "session_ended", "session_expired" -> new SessionNotFoundException(
                    "the session of [" + owner + "] ended while it waited for [" + key + "]",
                    String.valueOf(event.get("session"))
                );
                default -> new TaskCancelledException("waiting for [" + key + "] was cancelled");
            };
            default -> new ElasticsearchStatusException("unexpected lock event [" + type + "]", RestStatus.INTERNAL_SERVER_ERROR);
        };
    }

    private static long number(Object o) {
        return o instanceof Number n ? n.longValue() : -1;
    }

    private static List<String> holderNames(Object holders) {
        List<String> names = new ArrayList<>();
        if (holders instanceof List<?> list) {
            for (Object h : list) {
                names.add(String.valueOf(((Map<?, ?>) h).get("owner")));
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
