package org.eslm.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.eslm.client.errors.LockException;
import org.eslm.client.internal.Retrier;

/**
 * What a client tells its {@link LockClientListener}s, and the count of locks it found lost: one
 * per client, shared by its views. A listener that throws is logged and passed over.
 */
final class Events {
    private static final System.Logger LOG = System.getLogger(Events.class.getName());

    private final List<LockClientListener> listeners;
    private final AtomicLong lost = new AtomicLong();

    Events(List<LockClientListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    /** Locks found lost since the client was built. */
    long lostLocks() {
        return lost.get();
    }

    void acquired(HeldLock lock, long sentAtNanos) {
        if (!listeners.isEmpty()) {
            Duration took = since(sentAtNanos);
            tell(listener -> listener.onAcquired(lock, took));
        }
    }

    /**
     * Tells of {@code acquiring}'s failure, if it fails with a {@link LockException}, when it does;
     * {@code acquiring} itself is left as it is (a cancel still reaches its request).
     */
    void watchAcquire(String key, LockScope scope, long sentAtNanos, CompletableFuture<?> acquiring) {
        if (listeners.isEmpty()) {
            return;
        }
        acquiring.whenComplete((value, error) -> {
            if (error != null && Retrier.unwrap(error) instanceof LockException cause) {
                Duration took = since(sentAtNanos);
                tell(listener -> listener.onAcquireFailed(key, scope, took, cause));
            }
        });
    }

    void renewed(HeldLock lock) {
        tell(listener -> listener.onRenewed(lock));
    }

    void renewalFailed(HeldLock lock, LockException cause) {
        tell(listener -> listener.onRenewalFailed(lock, cause));
    }

    void lost(HeldLock lock, LockException cause) {
        lost.incrementAndGet();
        tell(listener -> listener.onLost(lock, cause));
    }

    void released(HeldLock lock, long heldSinceNanos) {
        if (!listeners.isEmpty()) {
            Duration held = since(heldSinceNanos);
            tell(listener -> listener.onReleased(lock, held));
        }
    }

    private void tell(Consumer<LockClientListener> event) {
        for (LockClientListener listener : listeners) {
            try {
                event.accept(listener);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "a lock client listener failed", e);
            }
        }
    }

    private static Duration since(long nanos) {
        return Duration.ofNanos(Math.max(0, System.nanoTime() - nanos));
    }
}
