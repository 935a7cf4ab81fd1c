package org.eslm.client.errors;

import java.util.Map;

/** 400: a field with a bad value (key, owner, duration over its cap, mode, scope, priority, tree path), or a required field missing. */
public class InvalidLockRequestException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "illegal_argument_exception";

    public InvalidLockRequestException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
