package org.eslm.spring;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.eslm.client.AcquireOptions;
import org.eslm.client.HeldLock;
import org.eslm.client.LockClient;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.LockWaitTimeoutException;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One key of a {@link LockManagerLockRegistry}: a thread of this process holds it through a local
 * {@link ReentrantLock} (so reentrancy is counted per thread, as in Spring's own registries, and
 * threads of one process queue here rather than on the server), and the first hold of a thread
 * takes the key on the server, the last {@code unlock()} releases it there.
 */
final class RegistryLock implements DistributedLock {
    private final LockClient client;
    private final String key;
    private final AcquireOptions options;
    private final ReentrantLock local = new ReentrantLock();
    /** The server's grant while a thread holds this lock; written under {@link #local}. */
    private volatile HeldLock grant;

    private volatile long lastUsed = System.nanoTime();

    RegistryLock(LockClient client, String key, AcquireOptions options) {
        this.client = client;
        this.key = key;
        this.options = options;
    }

    @Override
    public void lock() {
        local.lock();
        takeUninterruptibly(options.untilGranted());
    }

    @Override
    public void lock(Duration ttl) {
        local.lock();
        takeUninterruptibly(withTtl(options.untilGranted(), ttl));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        local.lockInterruptibly();
        if (!take(options.untilGranted())) {
            throw new IllegalStateException("a wait until granted ended without the lock of [" + key + "]");
        }
    }

    @Override
    public boolean tryLock() {
        if (!local.tryLock()) {
            return false;
        }
        if (local.getHoldCount() > 1) {
            return true;
        }
        try {
            grant = client.tryAcquire(key, options).orElse(null);
        } catch (RuntimeException e) {
            local.unlock();
            throw e;
        }
        if (grant == null) {
            local.unlock();
            return false;
        }
        return true;
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.ofNanos(Math.max(0, unit.toNanos(time))), null);
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        long deadline = System.nanoTime() + waitTime.toNanos();
        if (!local.tryLock(waitTime.toNanos(), TimeUnit.NANOSECONDS)) {
            return false;
        }
        Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
        return take(withTtl(options.withWait(left), ttl));
    }

    /**
     * Lets go of one hold of the calling thread; the last one releases the key on the server.
     *
     * @throws IllegalStateException the calling thread does not hold it (as Spring's registries)
     * @throws ConcurrentModificationException the lock was lost while held (its lease ran out,
     *     it was force-released): another owner may have had it meanwhile
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalStateException("the lock of [" + key + "] is not held by this thread");
        }
        lastUsed = System.nanoTime();
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        HeldLock held = grant;
        grant = null;
        try {
            held.close();
        } catch (LockLostException lost) {
            ConcurrentModificationException e =
                    new ConcurrentModificationException("the lock of [" + key + "] was lost while held");
            e.initCause(lost);
            throw e;
        } finally {
            local.unlock();
        }
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("a distributed lock has no conditions");
    }

    boolean isHeldByCurrentThread() {
        return local.isHeldByCurrentThread();
    }

    /** How long (ns) before {@code now} this lock was last let go, or 0 while held or waited for. */
    long unusedFor(long now) {
        return local.isLocked() || local.hasQueuedThreads() ? 0 : now - lastUsed;
    }

    /** Renews the held grant for {@code lease} (null: the lease it was granted with). */
    void renew(Duration lease) {
        HeldLock held = grant;
        held.renew(lease != null ? lease : Duration.ofMillis(held.leaseMs()));
    }

    /** The first hold of this thread takes the key, a nested one counts; on no grant, the hold is undone. */
    private boolean take(AcquireOptions with) throws InterruptedException {
        if (local.getHoldCount() > 1) {
            return true;
        }
        CompletableFuture<HeldLock> acquiring = client.acquireAsync(key, with);
        try {
            grant = acquiring.get();
            return true;
        } catch (InterruptedException e) {
            acquiring.cancel(true); // the server drops the waiter; a grant that comes anyway is released
            local.unlock();
            throw e;
        } catch (ExecutionException | CancellationException e) {
            local.unlock();
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            if (cause instanceof LockWaitTimeoutException || cause instanceof LockConflictException) {
                return false;
            }
            throw cause instanceof LockException lockError ? lockError : new IllegalStateException(cause);
        } catch (RuntimeException e) {
            local.unlock();
            throw e;
        }
    }

    /** {@link #take} for {@code lock()}, which may not be interrupted: waits on, then restores the flag. */
    private void takeUninterruptibly(AcquireOptions with) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (!take(with)) {
                        throw new IllegalStateException("a wait until granted ended without the lock of [" + key + "]");
                    }
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                    local.lock(); // take() let the local hold go: take it again and wait on
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@code with} under a lease of {@code ttl} that is not renewed (null: as the registry's). */
    private static AcquireOptions withTtl(AcquireOptions with, Duration ttl) {
        return ttl == null ? with : with.withLease(ttl).withWatchdog(false);
    }

    @Override
    public String toString() {
        return "RegistryLock[" + key + (local.isLocked() ? ", held" : "") + "]";
    }
}
