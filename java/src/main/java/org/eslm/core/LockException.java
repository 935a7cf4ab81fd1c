package org.eslm.core;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/**
 * Base of the plugin's lock outcomes. Each subclass fixes its HTTP status; Elasticsearch renders
 * the class name as the error {@code type} ({@code LockConflictException} becomes
 * {@code lock_conflict_exception}) and each {@code es.*} metadata entry as an extra field.
 */
public abstract class LockException extends ElasticsearchException {
    private static final long serialVersionUID = 1L;

    protected LockException(String message) {
        super(message);
    }

    protected LockException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public abstract RestStatus status();

    /** {@code {"type", "reason", "metadata"}}: enough to {@link #rebuild} the same exception on another node. */
    public static Map<String, Object> describe(LockException e) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        for (String key : e.getMetadataKeys()) {
            metadata.put(key, e.getMetadata(key));
        }
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("type", getExceptionName(e));
        d.put("reason", e.getMessage());
        d.put("metadata", metadata);
        return d;
    }

    /** The exception {@link #describe} described. */
    public static LockException rebuild(Map<String, Object> d) {
        String reason = String.valueOf(d.get("reason"));
        @SuppressWarnings("unchecked")
        Map<String, List<String>> md = (Map<String, List<String>>) d.getOrDefault("metadata", Map.of());
        LockException e = rebuildTyped(reason, md, String.valueOf(d.get("type")));
        // Metadata a constructor does not set (e.g. an applied answer) travels as it came.
        md.forEach((name, values) -> {
            if (e.getMetadata(name) == null) {
                e.addMetadata(name, values);
            }
        });
        return e;
    }

    private static LockException rebuildTyped(String reason, Map<String, List<String>> md, String type) {
        String key = first(md, "es.key");
        return switch (type) {
            case "lock_conflict_exception" ->
                new LockConflictException(reason, key, md.getOrDefault("es.holders", List.of()));
            case "lock_not_held_exception" -> new LockNotHeldException(reason, key, first(md, "es.owner"));
            case "lock_wait_timeout_exception" -> new LockWaitTimeoutException(reason, key, number(md, "es.waited_ms"));
            case "deadlock_exception" -> new DeadlockException(reason, key, md.getOrDefault("es.cycle", List.of()));
            case "session_not_found_exception" -> new SessionNotFoundException(reason, first(md, "es.session"));
            case "lock_limit_exceeded_exception" ->
                new LockLimitExceededException(reason, first(md, "es.limit"), number(md, "es.max"));
            case "lock_partition_unavailable_exception" ->
                new LockPartitionUnavailableException(reason, number(md, "es.retry_after_ms"));
            case "semaphore_limit_mismatch_exception" ->
                new SemaphoreLimitMismatchException(reason, key, number(md, "es.limit"));
            case "group_not_found_exception" -> new GroupNotFoundException(reason, first(md, "es.group"), null);
            case "group_already_exists_exception" ->
                new GroupAlreadyExistsException(reason, first(md, "es.group"), null);
            case "group_not_empty_exception" -> new GroupNotEmptyException(reason, first(md, "es.group"), null);
            case "member_already_joined_exception" ->
                new MemberAlreadyJoinedException(reason, first(md, "es.group"), first(md, "es.member"));
            case "lock_core_panic_exception" ->
                new LockCorePanicException(reason, number(md, "es.partition"), number(md, "es.epoch"));
            default -> throw new IllegalStateException("unknown lock exception type [" + type + "]: " + reason);
        };
    }

    private static String first(Map<String, List<String>> md, String key) {
        List<String> values = md.get(key);
        return values == null || values.isEmpty() ? "" : values.get(0);
    }

    private static long number(Map<String, List<String>> md, String key) {
        try {
            return Long.parseLong(first(md, key));
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
