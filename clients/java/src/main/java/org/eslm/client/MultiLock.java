package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.LockNotHeldException;
import org.eslm.client.internal.Retrier;

/**
 * The locks of one multi-lock (docs/API.md, "POST /_locks/_acquire"), granted together. Each is a
 * {@link HeldLock} with its own watchdog; closing this releases them all in one request.
 */
public final class MultiLock implements AsyncCloseable {
    private final Shared shared;
    private final String owner;
    private final List<HeldLock> locks;
    private final AtomicBoolean closed = new AtomicBoolean();

    MultiLock(Shared shared, String owner, List<HeldLock> locks) {
        this.shared = shared;
        this.owner = owner;
        this.locks = List.copyOf(locks);
    }

    /** The locks, in the order the server answered them. */
    public List<HeldLock> locks() {
        return locks;
    }

    /** The lock of {@code key}, if it is one of these. */
    public Optional<HeldLock> lock(String key) {
        return locks.stream().filter(lock -> lock.key().equals(key)).findFirst();
    }

    /** Whether any of the locks was lost. */
    public boolean isLost() {
        return locks.stream().anyMatch(HeldLock::isLost);
    }

    /** A listener told for each of the locks that is lost. */
    public MultiLock onLost(LockLostListener listener) {
        locks.forEach(lock -> lock.onLost(listener));
        return this;
    }

    /**
     * Releases every lock in one request. Fails with {@code LockLostException} if any of them was
     * lost while held, or was no longer held.
     */
    @Override
    public CompletableFuture<Void> closeAsync() {
        if (!closed.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(null);
        }
        List<HeldLock> mine = locks.stream()
                .filter(HeldLock::detach)
                .filter(shared.handles()::closedLast)
                .toList();
        if (mine.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return shared.requests().releaseAll(owner, mine).handle((answer, error) -> {
            if (error != null) {
                throw new CompletionException(Retrier.unwrap(error));
            }
            markUnreleased(mine, answer);
            mine.stream().filter(lock -> !lock.isLost()).forEach(HeldLock::reportReleased);
            Optional<LockException> lostBy = mine.stream()
                    .map(HeldLock::lostCause)
                    .flatMap(Optional::stream)
                    .findFirst();
            if (lostBy.isPresent()) {
                throw new CompletionException(new LockLostException("a lock of a multi-lock", lostBy.get()));
            }
            return null;
        });
    }

    /** A lock the release did not free was no longer held: it had been lost. */
    private static void markUnreleased(List<HeldLock> mine, JsonNode answer) {
        Set<String> released = new HashSet<>();
        for (JsonNode entry : answer.path("released")) {
            released.add(entry.path("key").asText() + "#"
                    + entry.path("fencing_token").asLong());
        }
        for (HeldLock lock : mine) {
            if (!released.contains(lock.key() + "#" + lock.fencingToken())) {
                lock.lose(new LockNotHeldException(
                        404, "lock [" + lock.key() + "] was no longer held at release", Map.of("key", lock.key())));
            }
        }
    }
}
