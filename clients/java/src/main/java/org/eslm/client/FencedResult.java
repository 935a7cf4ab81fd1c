package org.eslm.client;

import java.util.Map;
import org.eslm.client.errors.LockException;

/**
 * How one change of {@link HeldLock#bulk} went (docs/API.md "Fenced changes").
 *
 * @param index the document's index
 * @param id the document's id
 * @param outcome {@link Outcome#APPLIED}, {@link Outcome#STALE} or {@link Outcome#FAILED}
 * @param source the document as it now stands, without its fence: null for a tombstone, or when
 *     not applied
 * @param fence the document's fence token (the newer holder's when stale); 0 when failed
 * @param error null when applied; the {@link org.eslm.client.errors.StaleTokenException} when
 *     stale; the server's error when failed (e.g. {@link
 *     org.eslm.client.errors.InvalidLockRequestException} for an {@code inc} of text)
 */
public record FencedResult(
        String index, String id, Outcome outcome, Map<String, Object> source, long fence, LockException error) {

    /** What became of one fenced change. */
    public enum Outcome {
        /** The change is in the document (or left it as it was). */
        APPLIED,
        /** A later holder's token had changed the document: nothing written. */
        STALE,
        /** The server refused it for another reason ({@link #error()}): nothing written. */
        FAILED
    }

    public boolean isApplied() {
        return outcome == Outcome.APPLIED;
    }

    public boolean isStale() {
        return outcome == Outcome.STALE;
    }

    public boolean isFailed() {
        return outcome == Outcome.FAILED;
    }
}
