package org.eslm.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import org.eslm.client.errors.LateGrantException;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.LockNotHeldException;
import org.eslm.client.internal.Durations;
import org.eslm.client.internal.LossWatch;
import org.eslm.client.internal.Retrier;
import org.eslm.client.internal.Watchdog;
import org.eslm.client.internal.Wire;

/**
 * A granted lock. Closing it releases it, so try-with-resources holds it for a block:
 *
 * <pre>{@code
 * try (HeldLock lock = locks.acquire("orders-42", AcquireOptions.defaults().withWait(Duration.ofSeconds(5)))) {
 *     write(order, lock.fencingToken());
 * }
 * }</pre>
 *
 * <p>The lock belongs to its owner and {@link #fencingToken()}, not to a thread: any thread may
 * close it. While it is held a watchdog renews its lease at a fraction of it (unless turned off
 * in {@link AcquireOptions#watchdog()}), and a loss watch asks the server to answer as soon as
 * it ends ({@link LockClientBuilder#lossWatches}); when the watch or a renewal finds it gone, or
 * renewals fail until the lease runs out, {@link #isLost()} turns true, the {@link #onLost listeners} are told, and
 * {@link #close()} throws {@link LockLostException}. A lock acquired under a {@link LockSession}
 * follows the session's keep-alive instead, and is lost with it.
 */
public final class HeldLock implements AsyncCloseable {
    private final Shared shared;
    private final String owner;
    private final String acquisition;
    private final Grant grant;
    private final LockSession session;
    private final LostSignal lost;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The grant's mode: shared once {@link #downgrade()}d. */
    private volatile LockMode mode;
    /** When the grant was made into this handle: the start of its hold time for the listeners. */
    private final long heldSince = System.nanoTime();

    private final AtomicBoolean lossReported = new AtomicBoolean();
    private volatile Watchdog watchdog;
    private volatile LossWatch lossWatch;
    /** Told when a preempting waiter asks this holder to yield (docs/API.md "Preemption"). */
    private volatile RevokeListener revokeListener;

    private volatile Duration revokeGrace;

    HeldLock(Shared shared, String owner, String acquisition, Grant grant, LockSession session) {
        this.shared = shared;
        this.owner = owner;
        this.acquisition = acquisition;
        this.grant = grant;
        this.session = session;
        this.mode = grant.mode();
        this.lost = new LostSignal(describe(owner, grant));
        lost.add(this::reportLost);
    }

    /** Tells the client's listeners of the loss, once (its own signal, or its session's). */
    void reportLost(LockException cause) {
        if (lossReported.compareAndSet(false, true)) {
            shared.events().lost(this, cause);
        }
    }

    /** Tells the client's listeners that the grant was released (by its last handle). */
    void reportReleased() {
        shared.events().released(this, heldSince);
    }

    /** A renewal of this grant's lease for {@code requestedMs} (null: its default), the listeners told. */
    private CompletableFuture<Long> renewal(Long requestedMs, long budgetMs) {
        CompletableFuture<Long> renewing =
                shared.requests().renew(owner, key(), scope(), fencingToken(), requestedMs, budgetMs);
        renewing.whenComplete((leaseMs, error) -> {
            if (error == null) {
                shared.events().renewed(this);
            } else if (Retrier.unwrap(error) instanceof LockException cause) {
                shared.events().renewalFailed(this, cause);
            }
        });
        return renewing;
    }

    /**
     * Starts renewing a lease of {@code leaseMs} that began no earlier than {@code leaseStartNanos},
     * each renewal asking for {@code requestedMs} (null: the server's default lease).
     */
    void watch(long leaseStartNanos, long leaseMs, Long requestedMs) {
        long interval = shared.renewIntervalMs(requestedMs != null ? requestedMs : leaseMs);
        Watchdog dog = new Watchdog(shared.scheduler(), interval, budget -> renewal(requestedMs, budget), lost::lose);
        watchdog = dog;
        dog.start(leaseStartNanos, leaseMs);
        LossWatch watch = new LossWatch(
                shared.scheduler(),
                shared.lossWatchSlots(),
                interval,
                (waitMs, revoke) -> shared.requests().watch(key(), scope(), fencingToken(), waitMs, revoke),
                cause -> {
                    Watchdog renewing = watchdog;
                    if (renewing != null) {
                        renewing.stop();
                    }
                    lost.lose(cause);
                },
                revokeListener == null ? null : this::revokeRequested);
        lossWatch = watch;
        watch.start();
        if (closed.get()) {
            watch.stop(); // closed while starting
        }
    }

    /** Asks the loss watch (started next) to tell {@code listener} of a request to yield. */
    void notifyRevokes(RevokeListener listener) {
        this.revokeListener = listener;
    }

    private void revokeRequested(long graceMs) {
        Duration grace = Duration.ofMillis(graceMs);
        revokeGrace = grace;
        try {
            revokeListener.revokeRequested(this, grace);
        } catch (RuntimeException e) {
            // A listener's failure must not stop the watch: the loss is still found and reported.
        }
    }

    /**
     * The grace a preempting waiter gave this holder to yield (docs/API.md "Preemption"), if one
     * asked (and the options named an {@link AcquireOptions#onRevoke}).
     */
    public Optional<Duration> revokeGrace() {
        return Optional.ofNullable(revokeGrace);
    }

    /**
     * For a grant that arrived after the lease the client can count on (from {@code sentAtNanos},
     * the acquire's send time) was due for renewal: renews it now and hands it over only if the
     * server still holds it. Gone is {@link LateGrantException} (not acquired); any other failure
     * leaves its state unknown, so it is released (best effort) and the failure passed on.
     */
    CompletableFuture<HeldLock> confirmLate(long sentAtNanos, Long requestedMs) {
        long renewSentAt = System.nanoTime();
        return shared.requests()
                .renew(
                        owner,
                        key(),
                        scope(),
                        fencingToken(),
                        requestedMs,
                        shared.requests().retryBudgetMs())
                .handle((leaseMs, error) -> {
                    if (error == null) {
                        watch(renewSentAt, leaseMs, requestedMs);
                        return this;
                    }
                    detach();
                    Throwable cause = Retrier.unwrap(error);
                    if (cause instanceof LockNotHeldException gone) {
                        throw new CompletionException(new LateGrantException(key(), lateReason(sentAtNanos), gone));
                    }
                    shared.requests()
                            .release(owner, key(), scope(), fencingToken())
                            .exceptionally(ignored -> null);
                    throw new CompletionException(cause);
                });
    }

    private String lateReason(long sentAtNanos) {
        long tookMs = Duration.ofNanos(System.nanoTime() - sentAtNanos).toMillis();
        return "not acquired: the grant of " + describe(owner, grant) + " reached the client about " + tookMs
                + " ms after its request was sent (waited_ms " + grant.waitedMs() + ", lease_ms " + grant.leaseMs()
                + "), when its renewal was already due, and the renewal found it no longer held";
    }

    public String key() {
        return grant.key();
    }

    public String acquisition() {
        return acquisition;
    }

    public String owner() {
        return owner;
    }

    /** Exclusive or shared: as granted, or shared once {@link #downgrade()}d. */
    public LockMode mode() {
        return mode;
    }

    /**
     * Turns this exclusive lock into a shared one without letting go (docs/API.md "POST
     * /_locks/{key}/_downgrade"), as a writer that has finished writing and goes on reading: the
     * lock stays held throughout, so a writer queued for the key goes on waiting while queued
     * readers are let in at once. The fencing token and the lease stay; the watchdog goes on
     * renewing. A lock the server no longer holds is marked lost.
     *
     * @throws LockLostException the lock was lost (now or before): nothing downgraded
     * @throws IllegalStateException it is not an exclusive lock of a key or tree path (a shared
     *     one, a semaphore's permits, a leadership), it was closed, or it is a nested handle of a
     *     grant an outer handle holds ({@link #isReentrant()}: downgrade that one)
     */
    public void downgrade() {
        Sync.await(downgradeAsync());
    }

    /** {@link #downgrade()} without blocking a thread; the checks throw before anything is sent. */
    public CompletableFuture<Void> downgradeAsync() {
        checkHeld();
        if (scope() != LockScope.KEY && scope() != LockScope.TREE) {
            throw new IllegalStateException("only a lock of a key or tree path is downgraded, not " + this);
        }
        if (mode != LockMode.EXCLUSIVE) {
            throw new IllegalStateException(this + " is " + Wire.name(mode) + ": only an exclusive lock is downgraded");
        }
        if (closed.get()) {
            throw new IllegalStateException(this + " was closed: nothing to downgrade");
        }
        if (isReentrant()) {
            throw new IllegalStateException(this + " is a nested handle of its grant: downgrade the outer one");
        }
        return shared.requests()
                .downgrade(
                        owner, key(), scope(), fencingToken(), shared.requests().retryBudgetMs())
                .handle((answer, error) -> {
                    if (error == null) {
                        mode = Wire.parse(LockMode.class, answer.path("mode").asText("shared"));
                        return null;
                    }
                    throw asLost(Retrier.unwrap(error));
                });
    }

    public LockScope scope() {
        return grant.scope();
    }

    /** The permits this grant holds: a semaphore's ({@link Semaphore}); 0 for a lock. */
    public int permits() {
        return grant.permits();
    }

    /**
     * A semaphore's permits that nobody held just after this grant (docs/API.md "Semaphores"): how
     * many more a caller could take at once then; 0 for a lock.
     */
    public int remaining() {
        return grant.remaining();
    }

    /**
     * The grant's fencing token: strictly increasing per key. Pass it where the protected write
     * happens, e.g. as an external version (docs/API.md, "The fencing recipe").
     */
    public long fencingToken() {
        return grant.fencingToken();
    }

    /**
     * Writes {@code document} (a map or any object Jackson writes as a JSON object) as {@code
     * index/_doc/id}, fenced by this lock's token (docs/API.md "Fenced writes and optimistic
     * updates"): Elasticsearch refuses it once a later holder of the lock has written the document.
     *
     * @return the document's version after the write: this lock's token
     * @throws org.eslm.client.errors.StaleTokenException when a later holder already wrote it
     * @throws LockLostException without writing anything when the lock is already known lost
     */
    public long index(String index, String id, Object document) {
        checkHeld();
        return Documents.fencedIndex(shared.requests(), index, id, document, fencingToken());
    }

    /**
     * Merges the partial document {@code doc} into {@code index/_doc/id}, fenced by this lock's
     * token (docs/API.md "Fenced changes"): Elasticsearch applies it only if no later holder of the
     * lock has changed the document, on its primary, in the same operation. A missing document is
     * created.
     *
     * @return the document as it now stands, without its fence
     * @throws org.eslm.client.errors.StaleTokenException when a later holder has changed the
     *     document: nothing written
     * @throws LockLostException without sending anything when the lock is already known lost
     * @throws IllegalArgumentException before sending anything, for a document that sets {@code
     *     eslm_fence}
     */
    public Map<String, Object> update(String index, String id, Map<String, ?> doc) {
        Map<String, Object> params = Fenced.docParams(doc);
        return Fenced.change(shared.requests(), Fenced.name(index, "index"), Fenced.name(id, "id"), fence(), params);
    }

    /**
     * Runs the field operations {@code ops} ({@link FieldOp#inc}, {@link FieldOp#append}, {@link
     * FieldOp#set}, {@link FieldOp#remove}) in order on {@code index/_doc/id} as its primary holds
     * it, fenced by this lock's token: a counter or a list needs no read. Answers and throws as
     * {@link #update(String, String, Map)}; an operation the document refuses (an {@code inc} of
     * text) throws {@link org.eslm.client.errors.InvalidLockRequestException}, none of them written.
     */
    public Map<String, Object> update(String index, String id, List<FieldOp> ops) {
        Map<String, Object> params = Fenced.opsParams(ops);
        return Fenced.change(shared.requests(), Fenced.name(index, "index"), Fenced.name(id, "id"), fence(), params);
    }

    /**
     * A read-modify-write of {@code index/_doc/id} fenced by this lock's token: a fenced read first
     * (it raises the document's fence to the token, so an older holder's write after it is refused
     * and one before it is in what is read), then {@code change} applied to a copy of the source
     * (null when missing or a tombstone) and its result, the whole new document, written with the
     * same token. {@code change} returning null, or the source unchanged, writes nothing; it runs
     * once. Answers and throws as {@link #update(String, String, Map)}.
     */
    public Map<String, Object> update(String index, String id, UnaryOperator<Map<String, Object>> change) {
        if (change == null) {
            throw new IllegalArgumentException("[change] must be a function of the document, got [null]");
        }
        return Fenced.readModifyWrite(
                shared.requests(),
                Fenced.name(index, "index"),
                Fenced.name(id, "id"),
                fence(),
                change,
                this::checkHeld);
    }

    /**
     * The fenced read of {@code index/_doc/id}: raises its fence to this lock's token (from then on
     * an older holder's change is refused) and answers its source without the fence, or null when
     * missing or a tombstone (a missing document becomes a tombstone). Throws as {@link
     * #update(String, String, Map)}.
     */
    public Map<String, Object> read(String index, String id) {
        return Fenced.change(
                shared.requests(), Fenced.name(index, "index"), Fenced.name(id, "id"), fence(), Fenced.READ);
    }

    /**
     * The fenced delete of {@code index/_doc/id}: it becomes a tombstone that keeps the fence, so an
     * older holder's later change is still refused (a plain delete's version is forgotten after
     * {@code index.gc_deletes}); a later change re-creates it from an empty document. Throws as
     * {@link #update(String, String, Map)}.
     */
    public void delete(String index, String id) {
        Fenced.change(shared.requests(), Fenced.name(index, "index"), Fenced.name(id, "id"), fence(), Fenced.DELETE);
    }

    /**
     * Many fenced changes in one {@code _bulk} ({@link FencedChange#doc}, {@link FencedChange#ops},
     * {@link FencedChange#delete}), each fenced on its own by this lock's token.
     *
     * @return one {@link FencedResult} per change, in order: applied, stale or failed, with the
     *     document as it now stands or the error; a stale or failed item throws nothing
     * @throws LockLostException without sending anything when the lock is already known lost
     */
    public List<FencedResult> bulk(List<FencedChange> changes) {
        if (changes == null || changes.stream().anyMatch(Objects::isNull)) {
            throw new IllegalArgumentException("[changes] must be a list of fenced changes, got [" + changes + "]");
        }
        return Fenced.bulk(shared.requests(), List.copyOf(changes), fence());
    }

    /** The key and token that fence a change; refused at once when the lock is known lost. */
    private Fenced.Fence fence() {
        checkHeld();
        return new Fenced.Fence(key(), fencingToken());
    }

    /** Throws {@link LockLostException} if the lock is known lost: nothing is sent under a lost lock. */
    private void checkHeld() {
        Optional<LockException> gone = lostCause();
        if (gone.isPresent()) {
            throw new LockLostException(describe(owner, grant), gone.get());
        }
    }

    /** The lease left when the lock was granted, in milliseconds. */
    public long leaseMs() {
        return grant.leaseMs();
    }

    /** How long the request queued on the server before the grant, in milliseconds. */
    public long waitedMs() {
        return grant.waitedMs();
    }

    /**
     * True if the owner already held this lock: the same grant and token came back (an acquire
     * through {@link LockClient#reentrant()}, {@link LockClient#withOwner} or a shared builder
     * owner). The grant is released when the last of its handles is closed.
     */
    public boolean isReentrant() {
        return grant.reentrant();
    }

    /** The session the lock was acquired under, if any. */
    public Optional<LockSession> session() {
        return Optional.ofNullable(session);
    }

    /** Whether the lock was found lost while held (see the class comment). */
    public boolean isLost() {
        return lostCause().isPresent();
    }

    /** What revealed the loss, if the lock was lost. */
    public Optional<LockException> lostCause() {
        LockException own = lost.cause();
        if (own == null && session != null) {
            return session.lostCause();
        }
        return Optional.ofNullable(own);
    }

    /** Adds a listener told once when the lock is lost (at once if it already is). */
    public HeldLock onLost(LockLostListener listener) {
        if (session != null) {
            session.onLost(listener);
        } else {
            lost.add(listener);
        }
        return this;
    }

    /**
     * Renews the lease now, for {@code lease} from now. A lock found gone is marked lost and the
     * {@link LockNotHeldException} thrown.
     */
    public void renew(Duration lease) {
        long leaseMs = Durations.positiveMillis(lease, "lease");
        try {
            Sync.await(renewal(leaseMs, shared.requests().retryBudgetMs()));
        } catch (LockNotHeldException gone) {
            lost.lose(gone);
            throw gone;
        }
    }

    /**
     * Releases the lock. Fails with {@code LockLostException} if it was lost while held, or the
     * release found it gone.
     */
    @Override
    public CompletableFuture<Void> closeAsync() {
        if (!detach()) {
            return CompletableFuture.completedFuture(null);
        }
        boolean last = shared.handles().closedLast(this);
        Optional<LockException> lostBy = lostCause();
        if (lostBy.isPresent()) {
            if (last) {
                // Free it if the server still has it (the token guards a newer grant); report the loss.
                shared.requests().release(owner, key(), scope(), fencingToken()).exceptionally(ignored -> null);
            }
            return CompletableFuture.failedFuture(new LockLostException(describe(owner, grant), lostBy.get()));
        }
        if (!last) {
            return CompletableFuture.completedFuture(null); // an outer handle of this grant is still open
        }
        return shared.requests().release(owner, key(), scope(), fencingToken()).handle((answer, error) -> {
            if (error == null) {
                reportReleased();
                return null;
            }
            throw asLost(Retrier.unwrap(error));
        });
    }

    /** A release that found the lock gone reveals a loss; other failures pass as they are. */
    CompletionException asLost(Throwable error) {
        if (error instanceof LockNotHeldException gone) {
            lost.lose(gone);
            return new CompletionException(new LockLostException(describe(owner, grant), gone));
        }
        return new CompletionException(error);
    }

    /** Marks it closed and stops renewing; false if it already was closed. */
    boolean detach() {
        if (!closed.compareAndSet(false, true)) {
            return false;
        }
        shared.holdings().remove(this);
        Watchdog dog = watchdog;
        if (dog != null) {
            dog.stop();
        }
        LossWatch watch = lossWatch;
        if (watch != null) {
            watch.stop();
        }
        if (session != null) {
            session.forget(this);
        }
        return true;
    }

    /** Called when the lock is known gone by other means (its session ended, a multi-release). */
    void lose(LockException cause) {
        lost.lose(cause);
    }

    private static String describe(String owner, Grant grant) {
        return "lock [" + grant.key() + "] (" + Wire.name(grant.scope()) + ", token " + grant.fencingToken() + ") of ["
                + owner + "]";
    }

    @Override
    public String toString() {
        return describe(owner, grant) + (isLost() ? " LOST" : "");
    }
}
