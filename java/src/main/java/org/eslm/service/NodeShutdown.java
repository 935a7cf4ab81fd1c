package org.eslm.service;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.eslm.core.LockPartitionUnavailableException;

/**
 * This node's shutdown as the lock requests it coordinates see it (docs/RELIABILITY.md "Stopping
 * a node"). Elasticsearch stops a node's HTTP server first and waits for every open HTTP request
 * to end before it closes anything else; a queued acquire, a watch or an observe may stay open for
 * minutes. So once shutdown begins ({@link #begin}), every lock request this node coordinates is
 * answered 503 {@code lock_partition_unavailable_exception} naming the node ({@link #failure}),
 * which the clients retry through another node, and every later one is refused the same way.
 *
 * <p>Requests are tracked from when the coordinator takes them until they are answered
 * ({@link #track}). Nothing here blocks: {@link #begin} completes listeners on the calling thread.
 */
public final class NodeShutdown {
    private static final Logger logger = LogManager.getLogger(NodeShutdown.class);

    private final Supplier<String> nodeName;
    private final Set<Tracked<?>> inFlight = ConcurrentHashMap.newKeySet();
    private volatile boolean begun;

    public NodeShutdown(Supplier<String> nodeName) {
        this.nodeName = nodeName;
    }

    /** Whether this node's shutdown has begun. */
    public boolean begun() {
        return begun;
    }

    /**
     * The answer to a lock request on a node that is shutting down: 503, retryable, with no retry
     * hint (another node can take it at once) and {@code node_shutting_down} naming this node.
     */
    public LockPartitionUnavailableException failure() {
        return LockPartitionUnavailableException.nodeShuttingDown(nodeName.get());
    }

    /**
     * Tracks {@code listener}, the answer to a request this node coordinates, until it is answered.
     * When shutdown begins, {@code onShutdown} runs first (the caller cancels the request's task,
     * which drops its waiter wherever it queued), then the listener is answered with
     * {@link #failure}; whatever answers it afterwards is turned into that same failure, so the
     * client always learns to go elsewhere. A grant that raced the shutdown is not lost: the
     * client's retry through another node is re-entrant and finds it (docs/API.md "Errors").
     *
     * @return the listener to answer the request with, or {@code null} when shutdown has already
     *     begun: then {@code listener} has been answered with {@link #failure}
     */
    public <T> ActionListener<T> track(ActionListener<T> listener, Runnable onShutdown) {
        Tracked<T> tracked = new Tracked<>(listener, onShutdown);
        inFlight.add(tracked);
        if (begun) {
            if (inFlight.remove(tracked)) {
                tracked.stop(failure());
            }
            return null;
        }
        return tracked;
    }

    /**
     * Begins the shutdown: answers every tracked request with {@link #failure} and refuses later
     * ones. Returns how many were answered. Idempotent.
     */
    public int begin() {
        begun = true;
        int answered = 0;
        for (Tracked<?> tracked : inFlight) {
            if (inFlight.remove(tracked)) {
                tracked.stop(failure());
                answered++;
            }
        }
        return answered;
    }

    /** How many requests are tracked now (diagnostics and tests). */
    public int inFlight() {
        return inFlight.size();
    }

    private final class Tracked<T> implements ActionListener<T> {
        private final ActionListener<T> delegate;
        private final Runnable onShutdown;
        /** The shutdown's answer once it stopped this request: any other answer becomes it. */
        private volatile Exception stopped;

        Tracked(ActionListener<T> listener, Runnable onShutdown) {
            this.delegate = ActionListener.notifyOnce(listener);
            this.onShutdown = onShutdown;
        }

        @Override
        public void onResponse(T response) {
            inFlight.remove(this);
            Exception shutdown = stopped;
            if (shutdown == null) {
                delegate.onResponse(response);
            } else {
                delegate.onFailure(shutdown);
            }
        }

        @Override
        public void onFailure(Exception e) {
            inFlight.remove(this);
            Exception shutdown = stopped;
            delegate.onFailure(shutdown == null ? e : shutdown);
        }

        void stop(Exception failure) {
            stopped = failure;
            try {
                onShutdown.run();
            } catch (RuntimeException e) {
                logger.warn("cleaning up a lock request at shutdown failed", e);
            } finally {
                onFailure(failure);
            }
        }
    }
}
