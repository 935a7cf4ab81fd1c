package org.eslm.client.errors;

import java.util.Map;

/** 409: this waiter closed a cycle of owners waiting for each other and was chosen as the victim; locks it already held stay held. */
public class DeadlockException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "deadlock_exception";

    public DeadlockException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
