package org.eslm.client.errors;

import java.util.Map;

/**
 * 409 from Elasticsearch itself: a document write whose version or sequence number did not match
 * the document's (docs/API.md "Fenced writes and optimistic updates"). Thrown as one of its two
 * subclasses by {@code HeldLock.index} and {@code LockClient.optimisticUpdate}; a fenced change
 * ({@code HeldLock.update}) throws it as is when another write of the document got in between
 * {@code retry_on_conflict} times (nothing written: try again), or as a {@link
 * StaleTokenException} when a later holder changed the document.
 */
public class VersionConflictException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "version_conflict_engine_exception";

    public VersionConflictException(String reason, LockException refused) {
        super(refused.status(), TYPE, reason, refused.details(), refused);
    }

    /** A conflict the client tells from an answer that is not an error (a stale fenced change). */
    VersionConflictException(int status, String type, String reason, Map<String, Object> details) {
        super(status, type, reason, details);
    }
}
