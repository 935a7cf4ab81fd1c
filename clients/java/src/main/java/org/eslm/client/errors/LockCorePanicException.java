package org.eslm.client.errors;

import java.util.Map;

/** 500: the lock core panicked while serving this request (a bug); only this request failed. */
public class LockCorePanicException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "lock_core_panic_exception";

    public LockCorePanicException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
