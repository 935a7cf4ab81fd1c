package org.eslm.client;

import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockWaitTimeoutException;
import org.eslm.client.internal.Retrier;

/**
 * A {@link Lock} on one key whose ownership is the grant (its owner and fencing token), not the
 * calling thread: {@link #unlock()} from any thread releases the current grant, so code that
 * acquires on one thread and finishes on another (async pipelines, executors) works, where a
 * thread-owned lock fails with "not locked by current thread".
 *
 * <p>Each acquisition is made under an owner of its own ({@code <client owner>/lock-<random>}),
 * so two threads locking the same {@code TokenLock} exclude each other like any mutex instead of
 * sharing one reentrant grant. Not reentrant. The lease is renewed by the watchdog while held.
 *
 * <p>{@link #lock()} waits without bound, in successive server-side waits of the options' wait
 * (or 1 minute when none is set); {@link #tryLock(long, TimeUnit)} waits at most its time.
 * {@link #newCondition()} is not supported: there is no monitor to wait on.
 */
public final class TokenLock implements Lock {
    /** The server-side wait of one round of {@link #lock()} when the options give none. */
    static final Duration DEFAULT_ROUND = Duration.ofMinutes(1);

    private final LockClient client;
    private final String key;
    private final AcquireOptions options;
    private final AtomicReference<HeldLock> held = new AtomicReference<>();

    TokenLock(LockClient client, String key, AcquireOptions options) {
        this.client = client;
        this.key = key;
        this.options = options;
    }

    /** The grant held now, if any: its fencing token protects writes made under this lock. */
    public Optional<HeldLock> holding() {
        return Optional.ofNullable(held.get());
    }

    @Override
    public void lock() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (lockRound()) {
                        return;
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // lock() is not interruptible: keep waiting, restore the flag after
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        while (!lockRound()) {
            // the round's wait ran out: queue again
        }
    }

    @Override
    public boolean tryLock() {
        Optional<HeldLock> grant = acquirer().tryAcquire(key, options);
        grant.ifPresent(this::hold);
        return grant.isPresent();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Duration wait = Duration.ofNanos(Math.max(0, unit.toNanos(time)));
        try {
            hold(await(acquirer().acquireAsync(key, options.withWait(wait))));
            return true;
        } catch (LockWaitTimeoutException e) {
            return false;
        } catch (org.eslm.client.errors.LockConflictException e) {
            return false;
        }
    }

    /**
     * Releases the current grant, whichever thread acquired it.
     *
     * @throws IllegalMonitorStateException if the lock is not held
     * @throws org.eslm.client.errors.LockLostException if it was lost while held
     */
    @Override
    public void unlock() {
        HeldLock grant = held.getAndSet(null);
        if (grant == null) {
            throw new IllegalMonitorStateException("lock [" + key + "] is not held");
        }
        grant.close();
    }

    /** Always throws: a lock owned by a token has no monitor for conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("conditions need a thread-owned lock; [" + key + "] is token-owned");
    }

    /** One server-side wait; true when granted. */
    private boolean lockRound() throws InterruptedException {
        Duration round = options.maxWait() == null || options.triesOnce() ? DEFAULT_ROUND : options.maxWait();
        try {
            hold(await(acquirer().acquireAsync(key, options.withWait(round))));
            return true;
        } catch (LockWaitTimeoutException e) {
            return false;
        }
    }

    private void hold(HeldLock grant) {
        HeldLock previous = held.getAndSet(grant);
        if (previous != null) {
            previous.detach(); // its lease ran out before this grant could be made: it is history
        }
    }

    private LockClient acquirer() {
        return client.withOwner(client.owner() + "/lock-" + UUID.randomUUID());
    }

    /** The grant, interruptibly: an interrupt cancels the request, which drops the server's waiter. */
    private static HeldLock await(CompletableFuture<HeldLock> grant) throws InterruptedException {
        try {
            return grant.get();
        } catch (InterruptedException e) {
            grant.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = Retrier.unwrap(e);
            if (cause instanceof LockException lockError) {
                throw lockError;
            }
            throw new IllegalStateException(cause);
        }
    }
}
