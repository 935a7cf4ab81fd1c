package org.eslm.client.errors;

import java.util.Map;

/**
 * 409: a semaphore acquire named another limit than the semaphore has while anyone holds or waits
 * (docs/API.md "Semaphores"). {@link #limit()} is the semaphore's.
 */
public class SemaphoreLimitMismatchException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "semaphore_limit_mismatch_exception";

    public SemaphoreLimitMismatchException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }

    /** The semaphore's limit, or -1 if the answer did not say. */
    public int limit() {
        Object limit = details().get("limit");
        try {
            return limit == null ? -1 : Integer.parseInt(limit.toString());
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
