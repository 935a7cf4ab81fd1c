package org.eslm.client;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
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

    /** Who acquires: the shared owner, or the prefix of the owners made per acquisition. */
    public abstract String owner();

    /** The owner of the next acquisition (see {@link Owners}). */
    abstract String nextOwner();

    /** The session locks are acquired under, or null. */
    abstract LockSession session();

    /**
     * Acquires {@code key} as {@code options} say: waiting until granted (the default), at most
     * their wait, or not at all ({@link AcquireOptions#tryOnce()}).
     *
     * @throws org.eslm.client.errors.LockConflictException busy, with {@link AcquireOptions#tryOnce()}
     * @throws org.eslm.client.errors.LockWaitTimeoutException the wait ran out
     * @throws org.eslm.client.errors.LockException any other error answer, by type
     */
    public HeldLock acquire(String key, AcquireOptions options) {
        return Sync.await(acquireAsync(key, options));
    }

    /** Acquires {@code key} exclusively with the server's lease, waiting until granted. */
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
        String owner = nextOwner();
        String acquisition = acquisitionFor(owner, List.of(new LockTarget(key, options.mode(), options.scope())));
        CompletableFuture<HeldLock> acquiring = Futures.compose(
                shared().requests().acquire(owner, acquisition, key, options, sessionId()),
                answer -> handOver(owner, acquisition, Grant.single(answer), options, sentAt),
                HeldLock::closeAsync);
        shared().events().watchAcquire(key, options.scope(), sentAt, acquiring);
        return acquiring;
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
        String owner = nextOwner();
        String acquisition = acquisitionFor(owner, targets);
        CompletableFuture<MultiLock> acquiring = Futures.compose(
                shared().requests().acquireAll(owner, acquisition, targets, options, sessionId()),
                answer -> handOverAll(owner, acquisition, Grant.multi(answer), options, sentAt),
                MultiLock::closeAsync);
        if (!targets.isEmpty()) {
            LockTarget first = targets.get(0);
            shared().events().watchAcquire(first.key(), first.scope(), sentAt, acquiring);
        }
        return acquiring;
    }

    /** Every grant of a multi-lock handed over, or, if one of them cannot be, none of them. */
    private CompletableFuture<MultiLock> handOverAll(
            String owner, String acquisition, List<Grant> grants, AcquireOptions options, long sentAt) {
        List<CompletableFuture<HeldLock>> each = grants.stream()
                .map(grant -> handOver(owner, acquisition, grant, options, sentAt))
                .toList();
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).handle((all, error) -> {
            List<HeldLock> held = each.stream()
                    .filter(lock -> !lock.isCompletedExceptionally())
                    .map(CompletableFuture::join)
                    .toList();
            if (error == null) {
                return new MultiLock(shared(), owner, held);
            }
            new MultiLock(shared(), owner, held).closeAsync().exceptionally(ignored -> null);
            throw new CompletionException(Retrier.unwrap(error));
        });
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

    /**
     * The grant of a request sent at {@code sentAt} as a held lock, watched or under the session.
     * The lease the client can count on began at {@code sentAt} plus the server's {@code
     * waited_ms} (the server's own began later). A grant that arrives after its first renewal was
     * due is renewed before it is handed over, and fails with {@link
     * org.eslm.client.errors.LateGrantException} if that renewal finds it gone: a watched lock is
     * never handed over as held when the key may already be someone else's. Without a watchdog
     * the lease is the caller's own bound (ShedLock's lockAtMostFor, timed by the caller), which
     * a renewal would stretch: such a grant is handed over as it came.
     */
    CompletableFuture<HeldLock> handOver(
            String owner, String acquisition, Grant grant, AcquireOptions options, long sentAt) {
        LockSession session = session();
        HeldLock lock = new HeldLock(shared(), owner, acquisition, grant, session);
        lock.notifyRevokes(options.onRevoke());
        if (session != null) {
            session.remember(lock); // the session's keep-alive carries its locks' lease
            return CompletableFuture.completedFuture(opened(lock, sentAt));
        }
        Long requestedMs = options.lease() == null ? null : Durations.positiveMillis(options.lease(), "lease");
        long leaseStart = sentAt + TimeUnit.MILLISECONDS.toNanos(grant.waitedMs());
        if (!options.watchdog()) {
            return CompletableFuture.completedFuture(opened(lock, sentAt)); // the lease is the caller's bound
        }
        long renewalDue = leaseStart + TimeUnit.MILLISECONDS.toNanos(shared().renewIntervalMs(grant.leaseMs()));
        if (System.nanoTime() < renewalDue) {
            lock.watch(leaseStart, grant.leaseMs(), requestedMs);
            return CompletableFuture.completedFuture(held(opened(lock, sentAt)));
        }
        return lock.confirmLate(sentAt, requestedMs).thenApply(confirmed -> held(opened(confirmed, sentAt)));
    }

    /**
     * A watched lock handed over, in the client's {@link Holdings} (its close() releases it); a
     * grant that arrives once the client is closed is released at once, and the acquire fails.
     */
    private HeldLock held(HeldLock lock) {
        if (!shared().holdings().add(lock)) {
            lock.closeAsync().exceptionally(ignored -> null);
            throw new IllegalStateException("the lock client is closed: " + lock + " was released at once");
        }
        return lock;
    }

    /** The acquisition an acquire of {@code targets} by {@code owner} is ({@link Handles#acquisitionFor}). */
    String acquisitionFor(String owner, List<LockTarget> targets) {
        return shared().handles().acquisitionFor(owner, targets);
    }

    /** A grant handed over: one more handle of it, and the client's listeners told. */
    private HeldLock opened(HeldLock lock, long sentAt) {
        shared().handles().opened(lock);
        shared().events().acquired(lock, sentAt);
        return lock;
    }

    /** The id of the session acquisitions are made under, or null. */
    String sessionId() {
        LockSession session = session();
        return session == null ? null : session.id();
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
