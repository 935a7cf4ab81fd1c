package org.eslm.client.errors;

import java.util.Map;

/**
 * An error answered by the lock manager (docs/API.md, "Errors"), or a failure to reach it. Each
 * server error type has a subclass of its own (see {@link ServerErrors}), so callers catch the
 * case they handle rather than parse JSON. Unchecked: a lock call fails the way a lock does.
 */
public class LockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String type;
    private final String reason;
    private final transient Map<String, Object> details;

    /**
     * @param status the HTTP status (0 when no answer came: {@link LockTransportException})
     * @param type Elasticsearch's {@code error.type}, e.g. {@code lock_conflict_exception}
     * @param reason the server's {@code error.reason}
     * @param details the other fields of the error object ({@code holders}, {@code key}, ...)
     */
    public LockException(int status, String type, String reason, Map<String, Object> details) {
        this(status, type, reason, details, null);
    }

    protected LockException(int status, String type, String reason, Map<String, Object> details, Throwable cause) {
        super("[" + status + " " + type + "] " + reason, cause);
        this.status = status;
        this.type = type;
        this.reason = reason;
        this.details = Map.copyOf(details);
    }

    /** The HTTP status of the answer, 0 if none came. */
    public int status() {
        return status;
    }

    /** The error type exactly as docs/API.md names it, e.g. {@code lock_not_held_exception}. */
    public String type() {
        return type;
    }

    public String reason() {
        return reason;
    }

    /** The error object's fields besides {@code type} and {@code reason} (e.g. {@code key}). */
    public Map<String, Object> details() {
        return details;
    }

    /** A field of {@link #details()} as text, or null when absent. */
    protected String detail(String field) {
        Object value = details.get(field);
        return value == null ? null : value.toString();
    }
}
