package org.eslm.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link ReadWriteLock} on one key, owned by threads and reentrant as {@link
 * ReentrantReadWriteLock} is (as {@link ThreadLock} is a {@code ReentrantLock}): keep one per key
 * and share it between threads. The {@link #readLock()} holds the key <em>shared</em> on the
 * server, the {@link #writeLock()} <em>exclusive</em>, so readers of every process read together
 * and a writer is alone. A thread holds either through a local {@code ReentrantReadWriteLock}, so
 * nested holds count and the threads of this process queue there; a thread's first read hold takes
 * a shared grant under an owner of its own, its first write hold an exclusive one, and its last
 * unlock of either releases that grant. Only the holding thread may unlock ({@code
 * IllegalMonitorStateException} otherwise).
 *
 * <p>As with {@code ReentrantReadWriteLock}, a thread that holds the write lock may take the read
 * lock too (it reads under its exclusive grant), and <b>downgrade</b> by then unlocking the write
 * lock: the grant is then {@linkplain HeldLock#downgrade() downgraded} on the server, in one step,
 * so readers queued for the key get in and a queued writer goes on waiting, with the same fencing
 * token. The opposite, taking the write lock while holding only the read lock, would wait for
 * itself ({@code ReentrantReadWriteLock} deadlocks there): it throws {@link IllegalStateException}.
 *
 * <p>{@code lock()} waits until granted (an interrupt is kept and restored), {@code
 * lockInterruptibly()} cancels its waiting request on interrupt, {@code tryLock()} does not wait,
 * {@code tryLock(time, unit)} waits at most its time. The watchdog renews each grant while held.
 */
public final class ThreadReadWriteLock implements ReadWriteLock {
    private final LockClient client;
    private final String key;
    private final AcquireOptions readOptions;
    private final AcquireOptions writeOptions;
    private final ReentrantReadWriteLock local = new ReentrantReadWriteLock();
    private final ReadLock readLock = new ReadLock();
    private final WriteLock writeLock = new WriteLock();
    /** The exclusive grant while a thread holds the write lock; written under the local write lock. */
    private volatile HeldLock writer;
    /** Each reading thread's shared grant (a thread that holds the write lock reads under that one). */
    private final ConcurrentMap<Thread, HeldLock> readers = new ConcurrentHashMap<>();

    ThreadReadWriteLock(LockClient client, String key, AcquireOptions options) {
        this.client = client;
        this.key = key;
        this.readOptions = options.withMode(LockMode.SHARED);
        this.writeOptions = options.withMode(LockMode.EXCLUSIVE);
    }

    public String key() {
        return key;
    }

    /** Held shared on the server: any number of threads and processes read together. */
    @Override
    public ReadLock readLock() {
        return readLock;
    }

    /** Held exclusive on the server: one writer, no reader. */
    @Override
    public WriteLock writeLock() {
        return writeLock;
    }

    /**
     * The server's grant under which the calling thread holds this lock: the exclusive one while it
     * holds the write lock, else its shared one (its fencing token, lease); empty when it holds
     * neither.
     */
    public Optional<HeldLock> grant() {
        if (local.isWriteLockedByCurrentThread()) {
            return Optional.ofNullable(writer);
        }
        return Optional.ofNullable(readers.get(Thread.currentThread()));
    }

    /** Whether a thread of this process holds the write lock (through this object). */
    public boolean isWriteLocked() {
        return local.isWriteLocked();
    }

    /** How many read holds the threads of this process have (through this object). */
    public int getReadLockCount() {
        return local.getReadLockCount();
    }

    /** Whether threads of this process wait for it here. */
    public boolean hasQueuedThreads() {
        return local.hasQueuedThreads();
    }

    /** The read half: a shared grant per reading thread. */
    public final class ReadLock implements Lock {
        private ReadLock() {}

        @Override
        public void lock() {
            GrantWait.uninterruptibly(key, () -> {
                local.readLock().lock();
                return take(readOptions.untilGranted());
            });
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            local.readLock().lockInterruptibly();
            if (!take(readOptions.untilGranted())) {
                throw new IllegalStateException("a wait until granted ended without the read lock of [" + key + "]");
            }
        }

        @Override
        public boolean tryLock() {
            if (!local.readLock().tryLock()) {
                return false;
            }
            try {
                return take(readOptions.tryOnce());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // a try-lock queues nothing to cancel: keep the flag
                return false;
            }
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            long deadline = System.nanoTime() + Math.max(0, unit.toNanos(time));
            if (!local.readLock().tryLock(time, unit)) {
                return false;
            }
            return take(readOptions.withWait(Duration.ofNanos(Math.max(0, deadline - System.nanoTime()))));
        }

        /**
         * Lets go of one read hold of the calling thread; the last one releases its shared grant
         * (none if it reads under its own write lock).
         *
         * @throws IllegalMonitorStateException the calling thread holds no read lock
         * @throws org.eslm.client.errors.LockLostException its grant was lost while held
         */
        @Override
        public void unlock() {
            if (local.getReadHoldCount() == 0) {
                throw new IllegalMonitorStateException("the read lock of [" + key + "] is not held by this thread");
            }
            if (local.getReadHoldCount() > 1 || local.isWriteLockedByCurrentThread()) {
                local.readLock().unlock();
                return;
            }
            HeldLock held = readers.remove(Thread.currentThread());
            try {
                if (held != null) {
                    held.close();
                }
            } finally {
                local.readLock().unlock();
            }
        }

        /** Always throws: a lock on the server has no monitor for conditions. */
        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException("a lock on the server has no conditions; [" + key + "]");
        }

        /** The calling thread's read holds (0 when it holds none). */
        public int getHoldCount() {
            return local.getReadHoldCount();
        }

        /**
         * The first read hold of this thread takes a shared grant (unless it holds the write lock,
         * whose grant covers it); on no grant the hold is undone.
         */
        private boolean take(AcquireOptions with) throws InterruptedException {
            if (local.getReadHoldCount() > 1 || local.isWriteLockedByCurrentThread()) {
                return true;
            }
            HeldLock granted;
            try {
                granted = with.triesOnce()
                        ? client.tryAcquire(key, with).orElse(null)
                        : GrantWait.take(client, key, with);
            } catch (InterruptedException | RuntimeException e) {
                local.readLock().unlock();
                throw e;
            }
            if (granted == null) {
                local.readLock().unlock();
                return false;
            }
            readers.put(Thread.currentThread(), granted);
            return true;
        }

        @Override
        public String toString() {
            return "ThreadReadWriteLock.ReadLock[" + key + ", " + local.getReadLockCount() + " read holds]";
        }
    }

    /** The write half: one exclusive grant, downgraded when its thread keeps reading. */
    public final class WriteLock implements Lock {
        private WriteLock() {}

        @Override
        public void lock() {
            refuseUpgrade();
            GrantWait.uninterruptibly(key, () -> {
                local.writeLock().lock();
                return take(writeOptions.untilGranted());
            });
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            refuseUpgrade();
            local.writeLock().lockInterruptibly();
            if (!take(writeOptions.untilGranted())) {
                throw new IllegalStateException("a wait until granted ended without the write lock of [" + key + "]");
            }
        }

        @Override
        public boolean tryLock() {
            refuseUpgrade();
            if (!local.writeLock().tryLock()) {
                return false;
            }
            try {
                return take(writeOptions.tryOnce());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            refuseUpgrade();
            long deadline = System.nanoTime() + Math.max(0, unit.toNanos(time));
            if (!local.writeLock().tryLock(time, unit)) {
                return false;
            }
            return take(writeOptions.withWait(Duration.ofNanos(Math.max(0, deadline - System.nanoTime()))));
        }

        /**
         * Lets go of one write hold of the calling thread. The last one releases the exclusive
         * grant, or, when the thread still holds the read lock, downgrades it to shared on the
         * server (queued readers get in, the token stays) and keeps it as the thread's read grant.
         *
         * @throws IllegalMonitorStateException the calling thread does not hold the write lock
         * @throws org.eslm.client.errors.LockLostException the grant was lost while held
         */
        @Override
        public void unlock() {
            if (!local.isWriteLockedByCurrentThread()) {
                throw new IllegalMonitorStateException("the write lock of [" + key + "] is not held by this thread");
            }
            if (local.getWriteHoldCount() > 1) {
                local.writeLock().unlock();
                return;
            }
            HeldLock held = writer;
            writer = null;
            try {
                if (local.getReadHoldCount() > 0) {
                    readers.put(Thread.currentThread(), held); // its read unlock closes it, lost or not
                    held.downgrade();
                } else {
                    held.close();
                }
            } finally {
                local.writeLock().unlock();
            }
        }

        /** Always throws: a lock on the server has no monitor for conditions. */
        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException("a lock on the server has no conditions; [" + key + "]");
        }

        public boolean isHeldByCurrentThread() {
            return local.isWriteLockedByCurrentThread();
        }

        /** The calling thread's write holds (0 when it holds none). */
        public int getHoldCount() {
            return local.getWriteHoldCount();
        }

        /** A thread that reads without writing would wait for itself: refused. */
        private void refuseUpgrade() {
            if (local.getReadHoldCount() > 0 && !local.isWriteLockedByCurrentThread()) {
                throw new IllegalStateException("this thread holds the read lock of [" + key + "]: a read lock is not "
                        + "upgraded (it would wait for itself); unlock it first");
            }
        }

        /** The first write hold of this thread takes the exclusive grant; on no grant the hold is undone. */
        private boolean take(AcquireOptions with) throws InterruptedException {
            if (local.getWriteHoldCount() > 1) {
                return true;
            }
            HeldLock granted;
            try {
                granted = with.triesOnce()
                        ? client.tryAcquire(key, with).orElse(null)
                        : GrantWait.take(client, key, with);
            } catch (InterruptedException | RuntimeException e) {
                local.writeLock().unlock();
                throw e;
            }
            if (granted == null) {
                local.writeLock().unlock();
                return false;
            }
            writer = granted;
            return true;
        }

        @Override
        public String toString() {
            return "ThreadReadWriteLock.WriteLock[" + key + (local.isWriteLocked() ? ", held" : "") + "]";
        }
    }

    @Override
    public String toString() {
        return "ThreadReadWriteLock[" + key + ", " + local.getReadLockCount() + " read holds"
                + (local.isWriteLocked() ? ", write held" : "") + "]";
    }
}
