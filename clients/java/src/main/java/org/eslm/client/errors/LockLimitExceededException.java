package org.eslm.client.errors;

import java.util.Map;

/**
 * 429: a limit of the lock manager was reached (docs/API.md, "Limits"). {@link #limit()} names
 * the setting, {@link #max()} its value. Releasing locks makes room; the client never retries it.
 */
public class LockLimitExceededException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "lock_limit_exceeded_exception";

    public LockLimitExceededException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }

    /** The setting whose limit was reached, e.g. {@code locks.limits.max_locks}. */
    public String limit() {
        return detail("limit");
    }

    /** The limit's value, as the server wrote it. */
    public String max() {
        return detail("max");
    }
}
