package org.eslm.client.errors;

/**
 * A fenced write ({@code HeldLock.index}) refused by Elasticsearch: the document already carries a
 * larger version, written with the token of a later holder. This holder's lock is over; what it was
 * about to write must not land.
 */
public class StaleTokenException extends VersionConflictException {
    private static final long serialVersionUID = 1L;

    public StaleTokenException(String reason, LockException refused) {
        super(reason, refused);
    }
}
