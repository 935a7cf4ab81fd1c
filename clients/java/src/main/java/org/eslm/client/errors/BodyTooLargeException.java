package org.eslm.client.errors;

import java.util.Map;

/** 413: the body is longer than the lock manager accepts (refused before it is parsed). */
public class BodyTooLargeException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "status_exception";

    public BodyTooLargeException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
