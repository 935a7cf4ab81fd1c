package org.eslm.client.errors;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/** 409: a try-lock (no wait) found the key busy. {@link #holders()} names who holds it. */
public class LockConflictException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "lock_conflict_exception";

    public LockConflictException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }

    /** For a client-side conflict whose {@code cause} tells what revealed it. */
    protected LockConflictException(int status, String reason, Map<String, Object> details, Throwable cause) {
        super(status, TYPE, reason, details, cause);
    }

    /** The holders the server named: one owner, or several shared holders. */
    public List<String> holders() {
        Object holders = details().get("holders");
        if (holders instanceof Collection<?> many) {
            return many.stream().map(String::valueOf).toList();
        }
        return holders == null ? List.of() : List.of(holders.toString());
    }
}
