package org.eslm.client;

import java.time.Duration;
import org.eslm.client.errors.LockException;

/**
 * Told what a {@link LockClient}'s locks go through, for metrics or logs ({@link
 * LockClientBuilder#listener}): grants, failed acquires, renewals, losses and releases. Every
 * method has a default that does nothing, so a listener overrides what it needs.
 *
 * <p>A {@link HeldLock} covers a lock, a semaphore's permits ({@link LockScope#SEMAPHORE}), one
 * lock of a multi-lock and a leadership ({@link LockScope#ELECTION}). Methods are called on the
 * client's threads (an acquire's answer, the watchdog): return quickly and do not block. An
 * exception thrown by a listener is logged and otherwise ignored; it never reaches the caller of
 * the client or stops a watchdog.
 *
 * <p>The key is the application's own and may be of high cardinality: a metric should not take
 * it as a tag.
 */
public interface LockClientListener {
    /**
     * A grant was handed over to its caller.
     *
     * @param took from sending the acquire to the hand-over, retries and the server's queue included
     */
    default void onAcquired(HeldLock lock, Duration took) {}

    /**
     * An acquire request ended without a grant: busy ({@link
     * org.eslm.client.errors.LockConflictException}, for a try-lock), its wait ran out ({@link
     * org.eslm.client.errors.LockWaitTimeoutException}), or another error. A cancelled (or
     * interrupted) acquire is not reported. A {@link java.util.concurrent.locks.Lock}'s {@code
     * lock()} that waits in rounds reports each round that ran out. For a multi-lock, {@code key}
     * and {@code scope} are its first target's.
     */
    default void onAcquireFailed(String key, LockScope scope, Duration took, LockException cause) {}

    /** A renewal of {@code lock}'s lease (the watchdog's, or {@link HeldLock#renew}) succeeded. */
    default void onRenewed(HeldLock lock) {}

    /**
     * A renewal of {@code lock}'s lease failed; the watchdog tries again while the lease lasts,
     * and a renewal that finds the lock gone is followed by {@link #onLost}.
     */
    default void onRenewalFailed(HeldLock lock, LockException cause) {}

    /** {@code lock} was found lost while held (told once per lock, as its own listeners are). */
    default void onLost(HeldLock lock, LockException cause) {}

    /**
     * {@code lock} was released by its last handle's {@code close()} (or its multi-lock's), after
     * being held {@code held} (from its hand-over to the release's answer). A lost lock is not
     * reported here but in {@link #onLost}; nor are locks ended with their session.
     */
    default void onReleased(HeldLock lock, Duration held) {}
}
