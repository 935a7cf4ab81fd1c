package org.eslm.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.elasticsearch.client.RestClient;
import org.eslm.client.internal.Durations;

/**
 * The lock manager's client, on the application's own Elasticsearch {@link RestClient} (so its
 * authentication, TLS and node pool are reused). Thread-safe; build one per process:
 *
 * <pre>{@code
 * try (LockClient locks = LockClient.builder(restClient).owner("worker-1").build();
 *      HeldLock lock = locks.acquire("orders-42", AcquireOptions.defaults().withWait(Duration.ofSeconds(5)))) {
 *     ship(order, lock.fencingToken());
 * }
 * }</pre>
 *
 * <p>Locks belong to an owner (docs/API.md, "Conventions"), not to a thread or a connection: a
 * second acquire of a key by the same owner gets the same grant back ({@link
 * HeldLock#isReentrant()}). Concurrent workers that must exclude each other need owners of their
 * own: {@link #withOwner} gives a view sharing this client's connection and threads; {@link
 * #newLock} gives a {@link java.util.concurrent.locks.Lock} whose every acquisition is its own.
 */
public final class LockClient extends Locking implements AutoCloseable {
    private final Shared shared;
    private final String owner;
    private final boolean root;

    LockClient(Shared shared, String owner, boolean root) {
        if (owner == null || owner.isEmpty()) {
            throw new IllegalArgumentException("[owner] must not be empty");
        }
        this.shared = shared;
        this.owner = owner;
        this.root = root;
    }

    /** A builder over the application's low-level REST client (which it does not close). */
    public static LockClientBuilder builder(RestClient restClient) {
        return new LockClientBuilder(restClient);
    }

    @Override
    Shared shared() {
        return shared;
    }

    @Override
    LockSession session() {
        return null;
    }

    @Override
    public String owner() {
        return owner;
    }

    /**
     * The same client acting for another owner: it shares this client's connection, threads and
     * settings. Closing the view does nothing; close the client it came from.
     */
    public LockClient withOwner(String otherOwner) {
        return new LockClient(shared, otherOwner, false);
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

    /** Stops the watchdogs and this client's threads; the REST client stays open (it is yours). */
    @Override
    public void close() {
        if (root) {
            shared.close();
        }
    }
}
