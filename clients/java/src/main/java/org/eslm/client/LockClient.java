package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.UnaryOperator;
import org.eslm.client.errors.LockNotHeldException;
import org.eslm.client.errors.LockTransportException;
import org.eslm.client.internal.Durations;
import org.eslm.client.internal.Retrier;

/**
 * The lock manager's client, on the application's own Elasticsearch low-level client (so its
 * authentication, TLS and node pool are reused): a {@code Rest5Client} ({@link
 * LockClientBuilder#forRest5Client}, what the Java API client and Spring Boot 4 configure) or a
 * legacy {@code RestClient} ({@link LockClientBuilder#forRestClient}). No method of this class
 * names either client's types, so frameworks that introspect it (Spring) need only the one the
 * application has. Thread-safe; one client can serve the whole process:
 *
 * <pre>{@code
 * try (LockClient locks = LockClientBuilder.forRestClient(restClient).build();
 *      HeldLock lock = locks.acquire("orders-42", AcquireOptions.defaults().withWait(Duration.ofSeconds(5)))) {
 *     ship(order, lock.fencingToken());
 * }
 * }</pre>
 *
 * <p>Locks belong to an owner (docs/API.md, "Conventions"), not to a thread or a connection, and
 * an owner acquiring a key it holds gets the same grant back. So by default <b>every acquisition
 * has an owner of its own</b> ({@code <host>/<pid>/<random>/<n>}): threads sharing this client
 * exclude each other. Reentrancy is asked for: {@link #reentrant()} (one owner per calling
 * thread), {@link #withOwner} (one owner for every caller of the view), or the builder's {@link
 * LockClientBuilder#owner owner} (one owner for the whole client). A {@link HeldLock} remembers the
 * owner it was granted to, for its renewals, watch and release.
 */
public final class LockClient extends Locking implements AutoCloseable {
    private final Shared shared;
    private final Owners owners;
    private final boolean root;

    LockClient(Shared shared, Owners owners, boolean root) {
        this.shared = shared;
        this.owners = owners;
        this.root = root;
    }

    @Override
    Shared shared() {
        return shared;
    }

    @Override
    LockSession session() {
        return null;
    }

    /**
     * The owner every acquisition shares ({@link #withOwner}, the builder's {@code owner}), or the
     * prefix of the owners this client makes: {@code <prefix>/<n>} per acquisition, {@code
     * <prefix>/thread-<n>} per thread for a {@link #reentrant()} view.
     */
    @Override
    public String owner() {
        return owners.name();
    }

    @Override
    String nextOwner() {
        return owners.next();
    }

    /**
     * The same client acting for one shared owner: every acquire through the view is made for
     * {@code otherOwner}, so it is reentrant for all its callers. It shares this client's
     * connection, threads and settings. Closing the view does nothing; close the client it came
     * from.
     */
    public LockClient withOwner(String otherOwner) {
        return new LockClient(shared, new Owners(Owners.Kind.SHARED, otherOwner), false);
    }

    /**
     * The same client with one owner per calling thread ({@code <owner()>/thread-<n>}): a thread
     * that acquires a key it already holds through such a view gets its grant back ({@link
     * HeldLock#isReentrant()}), and other threads are excluded. The client counts the handles of
     * one grant: the lock is released when the last of them is closed, so nested blocks nest.
     * Views of one client on one thread share the owner. Closing the view does nothing.
     */
    public LockClient reentrant() {
        return new LockClient(shared, new Owners(Owners.Kind.EACH_THREAD, owners.name()), false);
    }

    /**
     * Opens a session (docs/API.md, "Sessions") of this owner with a {@code ttl}, kept alive in
     * the background at a fraction of it until closed. Its locks are released at once when it
     * ends, or when it expires because this process is gone.
     */
    public LockSession openSession(Duration ttl) {
        return openSession(ttl, null);
    }

    /** {@link #openSession(Duration)} in the partition of {@code routing} (a hash tag). */
    public LockSession openSession(Duration ttl, String routing) {
        return Sync.await(LockSession.open(this, Durations.positiveMillis(ttl, "ttl"), routing));
    }

    /**
     * A {@link java.util.concurrent.locks.Lock} on {@code key} whose ownership is the grant, not
     * the calling thread (see {@link TokenLock}).
     */
    public TokenLock newLock(String key, AcquireOptions options) {
        return new TokenLock(this, key, options);
    }

    /**
     * A {@link java.util.concurrent.locks.Lock} on {@code key} owned by the calling thread and
     * reentrant as {@link java.util.concurrent.locks.ReentrantLock} is (see {@link ThreadLock}):
     * keep one per key and share it between threads.
     */
    public ThreadLock newThreadLock(String key, AcquireOptions options) {
        return new ThreadLock(this, key, options);
    }

    /**
     * A {@link java.util.concurrent.locks.ReadWriteLock} on {@code key} owned by threads as {@link
     * java.util.concurrent.locks.ReentrantReadWriteLock} is (see {@link ThreadReadWriteLock}): its
     * read lock holds the key shared, its write lock exclusive, with the lease, wait and priority of
     * {@code options} (their mode is each half's own). Keep one per key and share it between threads.
     */
    public ThreadReadWriteLock readWriteLock(String key, AcquireOptions options) {
        return new ThreadReadWriteLock(this, key, options);
    }

    /** {@link #readWriteLock(String, AcquireOptions)} with the default options. */
    public ThreadReadWriteLock readWriteLock(String key) {
        return readWriteLock(key, AcquireOptions.defaults());
    }

    /**
     * Waits until the lock of {@code key} with {@code fencingToken} ends, at most {@code wait}
     * ({@code GET /_locks/{key}/_watch}): anyone who knows a token may watch it.
     */
    public LockWatch watch(String key, LockScope scope, long fencingToken, Duration wait) {
        return Sync.await(watchAsync(key, scope, fencingToken, wait));
    }

    /** {@link #watch} without blocking. */
    public CompletableFuture<LockWatch> watchAsync(String key, LockScope scope, long fencingToken, Duration wait) {
        if (fencingToken <= 0) {
            throw new IllegalArgumentException(
                    "[token] must be a fencing token (a positive whole number), got [" + fencingToken + "]");
        }
        long waitMs = Durations.millis(wait, "wait");
        return shared.requests().watch(key, scope, fencingToken, waitMs).thenApply(LockWatch::of);
    }

    /** The group {@code name} (docs/API.md "Groups"): create, join, observe, leave, delete. */
    public Group group(String name) {
        return new Group(shared, name);
    }

    /** Every group's name ({@code GET /_groups}). */
    public List<String> groups() {
        List<String> names = new ArrayList<>();
        Sync.await(shared.requests().groups()).path("groups").forEach(n -> names.add(n.asText()));
        return names;
    }

    /** Whether anyone holds {@code key} (key scope) now: a snapshot, see {@link #lockInfo}. */
    public boolean isLocked(String key) {
        return lockInfo(key).isLocked();
    }

    /** Holders and waiters of {@code key} now ({@code GET /_locks/{key}}); a free key has none. */
    public LockInfo lockInfo(String key) {
        return lockInfo(key, LockScope.KEY);
    }

    /** {@link #lockInfo(String)} of a key or tree path ({@code scope} KEY or TREE). */
    public LockInfo lockInfo(String key, LockScope scope) {
        return Sync.await(shared.requests().lockInfo(key, scope).thenApply(answer -> LockInfo.of(key, scope, answer)));
    }

    /**
     * Evicts every holder of {@code key} (docs/API.md "POST /_locks/{key}/_force_release"), logged on the node with
     * {@code reason}: for a holder known to be gone. Their tokens are dead; a holder still alive is
     * fenced off and finds its lock lost. Answers the evicted grants: owner to fencing token, empty
     * when nothing was held.
     */
    public Map<String, Long> forceRelease(String key, String reason) {
        return forceRelease(key, LockScope.KEY, reason);
    }

    /**
     * Changes document {@code index/_doc/id} without a lock (docs/API.md "Fenced writes and
     * optimistic updates"): {@code change} gets a copy of its source (null when there is none) and
     * returns the new one, written only if nobody wrote in between, else read and applied again, at
     * most 10 times more. Returning null or the source unchanged writes nothing.
     *
     * @return the source as it now stands
     * @throws org.eslm.client.errors.UpdateConflictException when every attempt lost its race
     */
    public Map<String, Object> optimisticUpdate(String index, String id, UnaryOperator<Map<String, Object>> change) {
        return optimisticUpdate(index, id, change, Documents.DEFAULT_RETRIES);
    }

    /** {@link #optimisticUpdate(String, String, UnaryOperator)} with at most {@code retries} attempts after the first. */
    public Map<String, Object> optimisticUpdate(
            String index, String id, UnaryOperator<Map<String, Object>> change, int retries) {
        return Documents.optimisticUpdate(shared.requests(), index, id, change, retries);
    }

    /**
     * Changes the limit of semaphore {@code name} while it is in use (docs/API.md "POST
     * /_semaphores/{name}/_limit"; the administrator's privilege {@code
     * cluster:admin/lock_manager/semaphore_limit}): grants follow it at once, nothing held is
     * revoked, a raise grants the waiters it lets in. Acquirers must name the new limit from then on
     * ({@link Locking#semaphore}).
     *
     * @throws LockNotHeldException nobody holds or waits for the semaphore
     * @throws org.eslm.client.errors.InvalidLockRequestException the limit is below a waiter's permits
     */
    public SemaphoreLimitChange setSemaphoreLimit(String name, int limit) {
        if (limit < 1 || limit > Semaphore.MAX_LIMIT) {
            throw new IllegalArgumentException("[limit] must be 1 to " + Semaphore.MAX_LIMIT + ", got [" + limit + "]");
        }
        return Sync.await(shared.requests().semaphoreLimit(name, limit).thenApply(SemaphoreLimitChange::of));
    }

    /** {@link #forceRelease(String, String)} in {@code scope}: a tree path, a semaphore, an election. */
    public Map<String, Long> forceRelease(String key, LockScope scope, String reason) {
        CompletableFuture<Map<String, Long>> evicted = shared.requests()
                .forceRelease(key, scope, reason)
                .handle((answer, error) -> {
                    if (error == null) {
                        Map<String, Long> tokens = new LinkedHashMap<>();
                        answer.path("released")
                                .forEach(h -> tokens.put(
                                        h.path("owner").asText(),
                                        h.path("fencing_token").asLong()));
                        return tokens;
                    }
                    Throwable cause = Retrier.unwrap(error);
                    if (cause instanceof LockNotHeldException) {
                        return Map.of(); // nothing held: nothing to evict
                    }
                    throw new CompletionException(cause);
                });
        return Sync.await(evicted);
    }

    /**
     * The cluster's {@code locks.lease.max} as the receiving node applies it ({@code GET
     * /_locks/_node/diagnostics}): the longest lease or ttl a request may ask for.
     */
    public Duration maxLease() {
        return Sync.await(shared.requests()
                .nodeDiagnostics()
                .thenApply(answer -> Durations.parse(
                        answer.path("settings").path("locks.lease.max").asText())));
    }

    /**
     * The cluster's {@code lock_partitions} health indicator ({@code GET
     * _health_report/lock_partitions}, docs/API.md "Health"): whether lock requests are served.
     *
     * @throws LockTransportException no answer, or an answer without the indicator (a node
     *     without the plugin)
     */
    public PartitionHealth partitionHealth() {
        return Sync.await(partitionHealthAsync());
    }

    /** {@link #partitionHealth()} without blocking: bound the wait with {@code orTimeout} or {@code get}. */
    public CompletableFuture<PartitionHealth> partitionHealthAsync() {
        return shared.requests().partitionHealth().thenApply(answer -> {
            JsonNode indicator = answer.path("indicators").path("lock_partitions");
            if (!indicator.path("status").isTextual()) {
                throw new LockTransportException(
                        200, "no lock_partitions indicator in the health report: " + answer, null);
            }
            Map<String, Object> details =
                    indicator.path("details").isObject() ? shared.requests().asMap(indicator.get("details")) : Map.of();
            return new PartitionHealth(
                    indicator.get("status").asText(), indicator.path("symptom").asText(""), details);
        });
    }

    /** Whether this client (or the client this view came from) was closed. */
    public boolean isClosed() {
        return shared.closed();
    }

    /**
     * How many grants this client holds open now: each lock, semaphore grant, lock of a multi-lock
     * or leadership handed over and not yet closed (a lost one counts until it is closed; nested
     * handles of one grant count once). Shared by the client's views.
     */
    public int heldLocks() {
        return shared.handles().openGrants();
    }

    /** How many held locks this client found lost since it was built ({@link LockClientListener#onLost}). */
    public long lostLocks() {
        return shared.events().lostLocks();
    }

    /**
     * Lets go of what this client still holds, as the Python client's {@code close()} does: every
     * open lock its watchdog renews (semaphore grants, leaderships and the locks of multi-locks
     * too) is released and every open session ended (which releases its locks), all at once,
     * waiting at most the {@link LockClientBuilder#retryBudget retry budget} plus 5 s for the
     * answers; a lock already gone (lost, expired, force-released) is passed over, and one whose
     * release is not answered in time ends with its lease. A lock acquired {@link
     * AcquireOptions#withWatchdog without a watchdog} is left to its lease, which is the caller's
     * own bound (ShedLock's {@code lockAtMostFor}). Then the watchdogs and this client's threads
     * stop; a grant that arrives afterwards is released at once and its acquire fails with
     * {@link IllegalStateException}. The REST client stays open (it is yours). Closing a view does
     * nothing; closing twice does nothing more.
     */
    @Override
    public void close() {
        if (root) {
            shared.close();
        }
    }
}
