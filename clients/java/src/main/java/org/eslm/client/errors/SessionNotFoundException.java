package org.eslm.client.errors;

import java.util.Map;

/** 404: an unknown, ended or expired session, or one of another owner. */
public class SessionNotFoundException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "session_not_found_exception";

    public SessionNotFoundException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
