package org.eslm.client;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.eslm.client.errors.LockException;

/**
 * A won leadership of an {@link Election}: a held lock of scope {@link LockScope#ELECTION} (the
 * candidate its owner, the term its fencing token), so its lease is renewed by the watchdog, a
 * loss watch (the election's {@code _observe} of its term) reports at once when the server ends
 * it, and closing it resigns, which elects the next queued candidate at once:
 *
 * <pre>{@code
 * try (Leadership lead = locks.election("scheduler").campaign("10.0.0.7", options)) {
 *     schedule(lead.term()); // the term fences the leader's writes
 * }
 * }</pre>
 *
 * <p>Lost as a lock is ({@link #isLost()}, {@link #onLost listeners} told once, {@link #close()}
 * throws {@link org.eslm.client.errors.LockLostException}): stop leading at once then.
 */
public final class Leadership implements AsyncCloseable {
    private final HeldLock lock;
    private final String value;

    Leadership(HeldLock lock, String value) {
        this.lock = lock;
        this.value = value;
    }

    public String name() {
        return lock.key();
    }

    /** Who leads: the candidate that campaigned. */
    public String candidate() {
        return lock.owner();
    }

    /**
     * The leadership's term: larger than every earlier one of the election; pass it where the
     * leader writes, as a fencing token (docs/API.md "The fencing recipe").
     */
    public long term() {
        return lock.fencingToken();
    }

    /** The value published with the campaign, if any. */
    public Optional<String> value() {
        return Optional.ofNullable(value);
    }

    /** The lease left when elected, in milliseconds. */
    public long leaseMs() {
        return lock.leaseMs();
    }

    /** How long the campaign queued before it was elected, in milliseconds. */
    public long waitedMs() {
        return lock.waitedMs();
    }

    public boolean isLost() {
        return lock.isLost();
    }

    public Optional<LockException> lostCause() {
        return lock.lostCause();
    }

    /** A listener told once when the leadership is lost (at once if it already is). */
    public Leadership onLost(LockLostListener listener) {
        lock.onLost(listener);
        return this;
    }

    /** Resigns (naming its term, so it never ends a newer leadership). */
    @Override
    public CompletableFuture<Void> closeAsync() {
        return lock.closeAsync();
    }

    @Override
    public String toString() {
        return "leadership of [" + name() + "] (term " + term() + ") by [" + candidate() + "]"
                + (isLost() ? " LOST" : "");
    }
}
