package org.eslm.client.errors;

/**
 * {@code LockClient.optimisticUpdate} gave up: each of its attempts lost its race with another
 * writer (the document's sequence number changed between its read and its write).
 */
public class UpdateConflictException extends VersionConflictException {
    private static final long serialVersionUID = 1L;

    public UpdateConflictException(String reason, LockException refused) {
        super(reason, refused);
    }
}
