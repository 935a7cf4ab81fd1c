package org.eslm.client.errors;

import java.util.Map;

/** 404: release or renew of a lock this owner does not hold (never held, expired, force-released, or another fencing token). */
public class LockNotHeldException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "lock_not_held_exception";

    public LockNotHeldException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
