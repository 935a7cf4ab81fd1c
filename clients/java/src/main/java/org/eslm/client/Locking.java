package org.eslm.client;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.internal.Durations;
import org.eslm.client.internal.Futures;
import org.eslm.client.internal.Retrier;

/**
 * The ways to acquire, shared by a {@link LockClient} (locks with leases of their own) and a
 * {@link LockSession} (locks under the session's lease). Every blocking call is its {@code Async}
 * twin awaited; no thread is blocked while a request is queued on the server.
 */
public abstract sealed class Locking permits LockClient, LockSession {
    Locking() {}

    /** The shared resources of the client. */
    abstract Shared shared();

    /** Who acquires. */
    public abstract String owner();

    /** The session locks are acquired under, or null. */
    abstract LockSession session();

    /**
     * Acquires {@code key} as {@code options} say: at once, or after queueing up to their wait.
     *
     * @throws org.eslm.client.errors.LockConflictException busy, and no wait was given
     * @throws org.eslm.client.errors.LockWaitTimeoutException the wait ran out
     * @throws org.eslm.client.errors.LockException any other error answer, by type
     */
    public HeldLock acquire(String key, AcquireOptions options) {
        return Sync.await(acquireAsync(key, options));
    }

    /** Acquires {@code key} exclusively with the server's defaults: a try-lock. */
    public HeldLock acquire(String key) {
        return acquire(key, AcquireOptions.defaults());
    }

    /** A try-lock: the lock if it was free, else empty (never waits, whatever the options say). */
    public Optional<HeldLock> tryAcquire(String key, AcquireOptions options) {
        return Sync.await(orEmptyOnConflict(acquireAsync(key, options.withWait(Duration.ZERO))));
    }

    public Optional<HeldLock> tryAcquire(String key) {
        return tryAcquire(key, AcquireOptions.defaults());
    }

    /**
     * {@link #acquire} without blocking a thread while queued. Cancelling the future aborts the
     * request (the server drops the waiter); a grant that arrives after that is released.
     */
    public CompletableFuture<HeldLock> acquireAsync(String key, AcquireOptions options) {
        long sentAt = System.nanoTime();
        LockSession session = session();
        return Futures.map(
                shared().requests().acquire(owner(), key, options, session == null ? null : session.id()),
                answer -> held(Grant.single(answer), options, sentAt),
                HeldLock::closeAsync);
    }

    /**
     * Acquires all of {@code targets} or none (docs/API.md, "POST /_locks/_acquire"). The mode and
     * scope of each come from its {@link LockTarget}; wait, lease and priority from {@code options}.
     */
    public MultiLock acquireAll(List<LockTarget> targets, AcquireOptions options) {
        return Sync.await(acquireAllAsync(targets, options));
    }

    public CompletableFuture<MultiLock> acquireAllAsync(List<LockTarget> targets, AcquireOptions options) {
        long sentAt = System.nanoTime();
        LockSession session = session();
        return Futures.map(
                shared().requests().acquireAll(owner(), targets, options, session == null ? null : session.id()),
                answer -> new MultiLock(
                        shared(),
                        owner(),
                        Grant.multi(answer).stream()
                                .map(grant -> held(grant, options, sentAt))
                                .toList()),
                MultiLock::closeAsync);
    }

    /**
     * The counting semaphore {@code name} of {@code limit} permits (docs/API.md "Semaphores"), to
     * acquire permits of as this owner: {@code try (HeldLock permit = locks.semaphore("api",
     * 4).acquire(1, options)) {...}}.
     */
    public Semaphore semaphore(String name, int limit) {
        return new Semaphore(this, name, limit);
    }

    /**
     * The leader election {@code name} (docs/API.md "Elections"), to campaign in as this owner
     * (or under this session), read, observe, or run a {@link LeaderLoop} in.
     */
    public Election election(String name) {
        return new Election(this, name);
    }

    /** A held grant of a request sent at {@code sentAt}, watched or under the session. */
    HeldLock held(Grant grant, AcquireOptions options, long sentAt) {
        LockSession session = session();
        HeldLock lock = new HeldLock(shared(), owner(), grant, session);
        if (session != null) {
            session.remember(lock);
        } else if (options.watchdog()) {
            lock.watch(sentAt, options.lease() == null ? null : Durations.positiveMillis(options.lease(), "lease"));
        }
        return lock;
    }

    /** A busy key (409 {@code lock_conflict_exception}) as an empty result; other failures kept. */
    static <T> CompletableFuture<Optional<T>> orEmptyOnConflict(CompletableFuture<T> attempt) {
        return attempt.handle((value, error) -> {
            if (error == null) {
                return Optional.of(value);
            }
            Throwable cause = Retrier.unwrap(error);
            if (cause instanceof LockConflictException) {
                return Optional.<T>empty();
            }
            throw new CompletionException(cause);
        });
    }
}
