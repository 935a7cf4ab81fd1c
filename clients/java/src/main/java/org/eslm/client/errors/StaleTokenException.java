package org.eslm.client.errors;

import java.util.Map;
import java.util.OptionalLong;

/**
 * A later holder of the lock got there first, and nothing of this holder's was written; its lock
 * is over. Two ways:
 *
 * <ul>
 *   <li>a fenced write ({@code HeldLock.index}) refused by Elasticsearch: the document already
 *       carries a larger version, written with the token of a later holder (409 {@code
 *       version_conflict_engine_exception}, Elasticsearch's error);
 *   <li>a fenced change ({@code HeldLock.update}, {@code read}, {@code delete}) that the plugin's
 *       script made a {@code noop} because a later token had changed the document (docs/API.md
 *       "Fenced changes"): the answer was a 200, so {@link #status()} is 200 and {@link #type()}
 *       {@value #STALE_TYPE}; {@link #fence()} is the document's fence token and {@link #token()}
 *       this lock's.
 * </ul>
 */
public class StaleTokenException extends VersionConflictException {
    private static final long serialVersionUID = 1L;

    /** The {@link #type()} of a fenced change found stale (the server answered it as a noop). */
    public static final String STALE_TYPE = "stale_token";

    public StaleTokenException(String reason, LockException refused) {
        super(reason, refused);
    }

    /** A fenced change answered as a noop: the document's fence {@code fence} is above {@code token}. */
    public StaleTokenException(String reason, long fence, long token) {
        super(200, STALE_TYPE, reason, Map.of("fence", fence, "token", token));
    }

    /** A fenced change's: the document's fence token, a later holder's. Empty for a refused fenced write. */
    public OptionalLong fence() {
        return number("fence");
    }

    /** A fenced change's: the token of the lock that sent it. Empty for a refused fenced write. */
    public OptionalLong token() {
        return number("token");
    }

    private OptionalLong number(String field) {
        return details().get(field) instanceof Long value ? OptionalLong.of(value) : OptionalLong.empty();
    }
}
