package org.eslm.client.errors;

import java.util.Map;

/**
 * No answer came: the connection failed, timed out, or the answer was not the lock manager's
 * (e.g. a proxy's page). {@link #status()} is the HTTP status when there was one, else 0.
 */
public class LockTransportException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "transport";

    public LockTransportException(int status, String reason, Throwable cause) {
        super(status, TYPE, reason, Map.of(), cause);
    }
}
