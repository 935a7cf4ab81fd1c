package org.eslm.client.errors;

import java.util.Map;

/** 409: the request queued for its whole wait without being granted. */
public class LockWaitTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "lock_wait_timeout_exception";

    public LockWaitTimeoutException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
