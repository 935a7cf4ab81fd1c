package org.eslm.client.errors;

/**
 * 409 from Elasticsearch itself: a document write whose version or sequence number did not match
 * the document's (docs/API.md "Fenced writes and optimistic updates"). Thrown as one of its two
 * subclasses by {@code HeldLock.index} and {@code LockClient.optimisticUpdate}.
 */
public class VersionConflictException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "version_conflict_engine_exception";

    VersionConflictException(String reason, LockException refused) {
        super(refused.status(), TYPE, reason, refused.details(), refused);
    }
}
