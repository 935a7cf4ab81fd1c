package org.eslm.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link Lock} on one key owned by the calling thread and reentrant as {@link ReentrantLock} is
 * (Curator's {@code InterProcessMutex} and Redisson's {@code RLock} are too): a thread holds it
 * through a local {@code ReentrantLock}, so nested locks count ({@link #getHoldCount()}) and the
 * threads of this process queue here; the first hold of a thread takes the key on the server
 * under an owner of its own, the last {@link #unlock()} releases it there. Only the holding thread
 * may unlock ({@code IllegalMonitorStateException} otherwise). Beside it, the client's default is
 * one owner per acquisition ({@link LockClient#acquire}) and {@link TokenLock} a lock owned by its
 * grant rather than a thread (clients/java/README.md "Locks as java.util.concurrent.locks.Lock").
 *
 * <p>{@link #lock()} and {@link #lockInterruptibly()} wait until granted, {@link #tryLock()} not
 * at all, {@link #tryLock(long, TimeUnit)} at most its time. The lease is renewed by the watchdog
 * while held, except for {@link #lockFor}/{@link #tryLockFor}, whose lease ends by itself.
 */
public final class ThreadLock implements Lock {
    private final LockClient client;
    private final String key;
    private final AcquireOptions options;
    private final ReentrantLock local = new ReentrantLock();
    /** The server's grant while a thread holds this lock; written under {@link #local}. */
    private volatile HeldLock grant;

    ThreadLock(LockClient client, String key, AcquireOptions options) {
        this.client = client;
        this.key = key;
        this.options = options;
    }

    public String key() {
        return key;
    }

    @Override
    public void lock() {
        GrantWait.uninterruptibly(key, () -> {
            local.lock();
            return take(options.untilGranted());
        });
    }

    /** {@link #lock()} under a lease of {@code lease} that is not renewed: the lock ends by itself after it. */
    public void lockFor(Duration lease) {
        GrantWait.uninterruptibly(key, () -> {
            local.lock();
            return take(fixedLease(options.untilGranted(), lease));
        });
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
        return tryLockFor(Duration.ofNanos(Math.max(0, unit.toNanos(time))), null);
    }

    /**
     * Waits at most {@code wait} (here and then on the server); with a {@code lease}, one that is
     * not renewed (null: the options' lease, renewed by the watchdog).
     */
    public boolean tryLockFor(Duration wait, Duration lease) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        if (!local.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS)) {
            return false;
        }
        Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
        return take(fixedLease(options.withWait(left), lease));
    }

    /**
     * Lets go of one hold of the calling thread; the last one releases the key on the server.
     *
     * @throws IllegalMonitorStateException the calling thread does not hold it
     * @throws org.eslm.client.errors.LockLostException the lock was lost while held (its lease ran
     *     out, it was force-released): another owner may have had it meanwhile
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("the lock of [" + key + "] is not held by this thread");
        }
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        HeldLock held = grant;
        grant = null;
        try {
            held.close();
        } finally {
            local.unlock();
        }
    }

    /** Always throws: a lock on the server has no monitor for conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("a lock on the server has no conditions; [" + key + "]");
    }

    public boolean isHeldByCurrentThread() {
        return local.isHeldByCurrentThread();
    }

    /** The calling thread's holds (0 when it holds none), as {@link ReentrantLock#getHoldCount()}. */
    public int getHoldCount() {
        return local.getHoldCount();
    }

    /** Whether a thread of this process holds it (through this object). */
    public boolean isLocked() {
        return local.isLocked();
    }

    /** Whether threads of this process wait for it here. */
    public boolean hasQueuedThreads() {
        return local.hasQueuedThreads();
    }

    /** The server's grant while the calling thread holds it (its fencing token, lease). */
    public Optional<HeldLock> grant() {
        return local.isHeldByCurrentThread() ? Optional.ofNullable(grant) : Optional.empty();
    }

    /**
     * Renews the calling thread's grant now for {@code lease} (null: the lease it was granted
     * with), counted from now.
     *
     * @throws IllegalMonitorStateException the calling thread does not hold it
     */
    public void renew(Duration lease) {
        HeldLock held = grant().orElseThrow(
                        () -> new IllegalMonitorStateException("the lock of [" + key + "] is not held by this thread"));
        held.renew(lease != null ? lease : Duration.ofMillis(held.leaseMs()));
    }

    /** The first hold of this thread takes the key, a nested one counts; on no grant, the hold is undone. */
    private boolean take(AcquireOptions with) throws InterruptedException {
        if (local.getHoldCount() > 1) {
            return true;
        }
        HeldLock granted;
        try {
            granted = GrantWait.take(client, key, with);
        } catch (InterruptedException | RuntimeException e) {
            local.unlock();
            throw e;
        }
        if (granted == null) {
            local.unlock();
            return false;
        }
        grant = granted;
        return true;
    }

    /** {@code with} under a lease of {@code lease} that is not renewed (null: as the options say). */
    private static AcquireOptions fixedLease(AcquireOptions with, Duration lease) {
        return lease == null ? with : with.withLease(lease).withWatchdog(false);
    }

    @Override
    public String toString() {
        return "ThreadLock[" + key + (local.isLocked() ? ", held" : "") + "]";
    }
}
