package org.eslm.client;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockWaitTimeoutException;

/**
 * How the thread-owned {@code Lock} views ({@link ThreadLock}, {@link ThreadReadWriteLock}) wait
 * for the server's grant once the calling thread has its local hold: an interrupt cancels the
 * queued request (the server drops the waiter; a grant that comes anyway is released), a wait
 * that runs out or a busy key is no grant, anything else is thrown.
 */
final class GrantWait {
    /** One try of a {@code lock()} that may not be interrupted: false when no grant came. */
    @FunctionalInterface
    interface Attempt {
        boolean run() throws InterruptedException;
    }

    private GrantWait() {}

    /**
     * The grant of {@code key} under {@code options}, or null when their wait ran out or the key
     * was busy.
     *
     * @throws InterruptedException the thread was interrupted: the request was cancelled
     */
    static HeldLock take(LockClient client, String key, AcquireOptions options) throws InterruptedException {
        CompletableFuture<HeldLock> acquiring = client.acquireAsync(key, options);
        try {
            return acquiring.get();
        } catch (InterruptedException e) {
            acquiring.cancel(true); // the server drops the waiter; a grant that comes anyway is released
            throw e;
        } catch (ExecutionException | CancellationException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            if (cause instanceof LockWaitTimeoutException || cause instanceof LockConflictException) {
                return null;
            }
            throw cause instanceof LockException lockError ? lockError : new IllegalStateException(cause);
        }
    }

    /**
     * Runs {@code attempt} (which takes the local hold, then the grant, and lets the local hold go
     * when interrupted) until it answers, for a {@code lock()} that waits on through interrupts
     * and restores the thread's interrupt flag afterwards.
     *
     * @throws IllegalStateException a wait until granted ended without the lock
     */
    static void uninterruptibly(String key, Attempt attempt) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (!attempt.run()) {
                        throw new IllegalStateException("a wait until granted ended without the lock of [" + key + "]");
                    }
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // the attempt let its local hold go: take it again and wait on
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
