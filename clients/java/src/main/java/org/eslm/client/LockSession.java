package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.SessionNotFoundException;
import org.eslm.client.internal.Futures;
import org.eslm.client.internal.Retrier;
import org.eslm.client.internal.Watchdog;

/**
 * A session (docs/API.md, "Sessions"): many locks under one lease, kept alive in the background at
 * a fraction of its ttl. Acquire through it as through a {@link LockClient}; its locks follow its
 * lease. When this process dies the keep-alives stop, the session expires and all its locks are
 * released at once. When a keep-alive finds it gone, it and every lock under it are lost
 * ({@link #isLost()}, listeners told, {@link #close()} throws {@link LockLostException}).
 */
public final class LockSession extends Locking implements AsyncCloseable {
    private final Shared shared;
    private final String owner;
    private final String id;
    private final long ttlMs;
    private final LostSignal lost;
    private final Set<HeldLock> open = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Watchdog keepAlive;

    private LockSession(Shared shared, String owner, String id, long ttlMs) {
        this.shared = shared;
        this.owner = owner;
        this.id = id;
        this.ttlMs = ttlMs;
        this.lost = new LostSignal("session [" + id + "] of [" + owner + "]");
    }

    static CompletableFuture<LockSession> open(LockClient client, long ttlMs, String routing) {
        Shared shared = client.shared();
        String owner = client.nextOwner(); // a session is one owner: its locks are reentrant within it
        long sentAt = System.nanoTime();
        return Futures.map(
                shared.requests().openSession(owner, ttlMs, routing),
                answer -> started(shared, owner, answer, sentAt),
                LockSession::closeAsync);
    }

    private static LockSession started(Shared shared, String owner, JsonNode answer, long sentAt) {
        LockSession session = new LockSession(
                shared,
                owner,
                answer.get("session").asText(),
                answer.get("ttl_ms").asLong());
        Watchdog dog = new Watchdog(
                shared.scheduler(),
                shared.renewIntervalMs(session.ttlMs),
                budget -> shared.requests().keepAlive(owner, session.id, budget),
                session.lost::lose);
        session.keepAlive = dog;
        session.lost.add(cause -> session.open.forEach(lock -> lock.reportLost(cause)));
        dog.start(sentAt, answer.get("expires_in_ms").asLong());
        if (!shared.holdings().add(session)) { // the client's close() ends it otherwise
            session.closeAsync().exceptionally(ignored -> null);
            throw new IllegalStateException("the lock client is closed: " + session + " was ended at once");
        }
        return session;
    }

    @Override
    Shared shared() {
        return shared;
    }

    @Override
    LockSession session() {
        return this;
    }

    @Override
    public String owner() {
        return owner;
    }

    @Override
    String nextOwner() {
        return owner;
    }

    /** The session's id: a secret of its owner (docs/API.md), never listed by the server. */
    public String id() {
        return id;
    }

    public long ttlMs() {
        return ttlMs;
    }

    public boolean isLost() {
        return lost.cause() != null;
    }

    public Optional<LockException> lostCause() {
        return Optional.ofNullable(lost.cause());
    }

    /** A listener told once when the session (and so each of its locks) is lost. */
    public LockSession onLost(LockLostListener listener) {
        lost.add(listener);
        return this;
    }

    void remember(HeldLock lock) {
        open.add(lock);
    }

    void forget(HeldLock lock) {
        open.remove(lock);
    }

    /**
     * Ends the session: the server releases its locks (their handles need no closing after this).
     * Fails with {@code LockLostException} if the session was lost, or the server no longer knew it.
     */
    @Override
    public CompletableFuture<Void> closeAsync() {
        if (!closed.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(null);
        }
        shared.holdings().remove(this);
        Watchdog dog = keepAlive;
        if (dog != null) {
            dog.stop();
        }
        open.forEach(lock -> {
            lock.detach();
            shared.handles().closedLast(lock);
        });
        CompletableFuture<JsonNode> ended = shared.requests().endSession(owner, id);
        LockException lostBy = lost.cause();
        if (lostBy != null) {
            ended.exceptionally(ignored -> null);
            return CompletableFuture.failedFuture(new LockLostException("session [" + id + "]", lostBy));
        }
        return ended.handle((answer, error) -> {
            if (error == null) {
                return null;
            }
            Throwable cause = Retrier.unwrap(error);
            if (cause instanceof SessionNotFoundException gone) {
                lost.lose(gone);
                throw new java.util.concurrent.CompletionException(new LockLostException("session [" + id + "]", gone));
            }
            throw new java.util.concurrent.CompletionException(cause);
        });
    }

    @Override
    public String toString() {
        return "session of [" + owner + "]" + (isLost() ? " LOST" : "");
    }
}
