package org.eslm.client.errors;

import java.util.Map;

/**
 * Thrown by {@code close()} of a lock (or session) that was lost while held: the server reported
 * it gone (expired, force-released) or it could not be renewed before its lease ran out. Work
 * done under it may have overlapped another holder's: the fencing token is what protects data
 * (docs/API.md, "The fencing recipe"). {@link #getCause()} is what revealed the loss.
 */
public class LockLostException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "lock_lost";

    public LockLostException(String what, LockException cause) {
        super(cause.status(), TYPE, what + " was lost while held: " + cause.getMessage(), Map.of(), cause);
    }
}
