package org.eslm.client.errors;

import java.util.Map;

/**
 * Not acquired: the grant arrived so late that the lease the client can count on (from when the
 * request was sent, plus the server's {@code waited_ms}) had run out or was due for renewal, and
 * the renewal made before handing it over found it no longer held (its lease ended, and the key
 * may already be someone else's). A {@link LockConflictException}, since to the caller it is a
 * busy key: {@code tryAcquire} answers empty.
 */
public class LateGrantException extends LockConflictException {
    private static final long serialVersionUID = 1L;

    public LateGrantException(String key, String reason, Throwable cause) {
        super(409, reason, Map.of("key", key), cause);
    }
}
