package org.eslm.client;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.eslm.client.internal.Futures;

/**
 * A counting semaphore (docs/API.md "Semaphores"): up to {@link #limit()} permits held at once,
 * each grant with its own lease, renewed by the watchdog like a lock, and its fencing token. From
 * {@link Locking#semaphore}; the permits are acquired as its owner (or under its session). The
 * options' wait, lease, priority and watchdog apply; mode and scope do not. A grant is a {@link
 * HeldLock} of scope {@link LockScope#SEMAPHORE}: close it to give the permits back.
 *
 * <p>The limit is the semaphore's while anyone holds or waits: another one is refused with {@link
 * org.eslm.client.errors.SemaphoreLimitMismatchException}, whose limit an administrator may have
 * changed ({@link LockClient#setSemaphoreLimit}). Each acquisition of a {@link LockClient}
 * has an owner of its own, so workers sharing the client each hold their own permits; the same
 * owner asking again with the same permits ({@link LockClient#withOwner}, {@link
 * LockClient#reentrant()}) gets its grant back.
 */
public final class Semaphore {
    static final int MAX_LIMIT = 65_535;

    private final Locking locking;
    private final String name;
    private final int limit;

    Semaphore(Locking locking, String name, int limit) {
        this.locking = Objects.requireNonNull(locking, "locking");
        this.name = Objects.requireNonNull(name, "name");
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("[limit] must be 1 to " + MAX_LIMIT + ", got [" + limit + "]");
        }
        this.limit = limit;
    }

    public String name() {
        return name;
    }

    public int limit() {
        return limit;
    }

    /**
     * Acquires {@code permits}: at once, or after queueing up to the options' wait (strict FIFO
     * within a priority).
     *
     * @throws org.eslm.client.errors.LockConflictException they do not fit, with {@link AcquireOptions#tryOnce()}
     * @throws org.eslm.client.errors.LockWaitTimeoutException the wait ran out
     */
    public HeldLock acquire(int permits, AcquireOptions options) {
        return Sync.await(acquireAsync(permits, options));
    }

    /** One permit. */
    public HeldLock acquire(AcquireOptions options) {
        return acquire(1, options);
    }

    /** {@code permits} if they fit now, else empty (never waits). */
    public Optional<HeldLock> tryAcquire(int permits, AcquireOptions options) {
        return Sync.await(Locking.orEmptyOnConflict(acquireAsync(permits, options.withWait(Duration.ZERO))));
    }

    /** {@link #acquire} without blocking a thread while queued. */
    public CompletableFuture<HeldLock> acquireAsync(int permits, AcquireOptions options) {
        if (permits < 1 || permits > limit) {
            throw new IllegalArgumentException("[permits] must be 1 to the limit " + limit + ", got [" + permits + "]");
        }
        if (options.lockDelay() != null) {
            throw new IllegalArgumentException("[lock_delay] a semaphore has no lock-delay");
        }
        long sentAt = System.nanoTime();
        String owner = locking.nextOwner();
        String acquisition =
                locking.acquisitionFor(owner, List.of(new LockTarget(name, LockMode.SHARED, LockScope.SEMAPHORE)));
        CompletableFuture<HeldLock> acquiring = Futures.compose(
                locking.shared()
                        .requests()
                        .acquireSemaphore(owner, acquisition, name, permits, limit, options, locking.sessionId()),
                answer -> locking.handOver(owner, acquisition, Grant.single(answer), options, sentAt),
                HeldLock::closeAsync);
        locking.shared().events().watchAcquire(name, LockScope.SEMAPHORE, sentAt, acquiring);
        return acquiring;
    }

    @Override
    public String toString() {
        return "semaphore [" + name + "] of " + limit + " permits, as [" + locking.owner() + "]";
    }
}
