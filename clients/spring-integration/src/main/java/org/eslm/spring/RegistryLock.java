package org.eslm.spring;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.eslm.client.ThreadLock;
import org.eslm.client.errors.LockLostException;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One key of a {@link LockManagerLockRegistry}: the client's {@link ThreadLock} (reentrant per
 * thread, as Spring's own registries' locks are), with Spring's contract at unlock: {@code
 * IllegalStateException} from a thread that does not hold it, {@code
 * ConcurrentModificationException} for a lock lost while held.
 */
final class RegistryLock implements DistributedLock {
    private final ThreadLock lock;
    private volatile long lastUsed = System.nanoTime();

    RegistryLock(ThreadLock lock) {
        this.lock = lock;
    }

    @Override
    public void lock() {
        lock.lock();
    }

    @Override
    public void lock(Duration ttl) {
        lock.lockFor(ttl);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lock.lockInterruptibly();
    }

    @Override
    public boolean tryLock() {
        return lock.tryLock();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return lock.tryLock(time, unit);
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        return lock.tryLockFor(waitTime, ttl);
    }

    @Override
    public void unlock() {
        if (!lock.isHeldByCurrentThread()) {
            throw new IllegalStateException("the lock of [" + lock.key() + "] is not held by this thread");
        }
        lastUsed = System.nanoTime();
        try {
            lock.unlock();
        } catch (LockLostException lost) {
            ConcurrentModificationException e =
                    new ConcurrentModificationException("the lock of [" + lock.key() + "] was lost while held");
            e.initCause(lost);
            throw e;
        }
    }

    @Override
    public Condition newCondition() {
        return lock.newCondition();
    }

    boolean isHeldByCurrentThread() {
        return lock.isHeldByCurrentThread();
    }

    /** How long (ns) before {@code now} this lock was last let go, or 0 while held or waited for. */
    long unusedFor(long now) {
        return lock.isLocked() || lock.hasQueuedThreads() ? 0 : now - lastUsed;
    }

    /** Renews the calling thread's grant for {@code lease} (null: the lease it was granted with). */
    void renew(Duration lease) {
        lock.renew(lease);
    }

    @Override
    public String toString() {
        return "RegistryLock[" + lock + "]";
    }
}
