package org.eslm.client.errors;

import java.util.Map;

/**
 * The calling thread was interrupted while it waited for an answer. The request was cancelled
 * (a queued acquire is dropped by the server when its connection closes) and the thread's
 * interrupt flag is set again.
 */
public class LockInterruptedException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "interrupted";

    public LockInterruptedException(InterruptedException cause) {
        super(0, TYPE, "interrupted while waiting for the lock manager", Map.of(), cause);
    }
}
