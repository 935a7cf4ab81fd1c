package org.eslm.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What a client holds on its own behalf and lets go of when it is closed ({@link
 * LockClient#close()}), as the Python client's {@code close()} does: every open lock its watchdog
 * keeps alive, and every open session (whose end releases the session's locks). A lock acquired
 * without a watchdog is not here: its lease is the caller's own bound (ShedLock's {@code
 * lockAtMostFor}, or what is left of {@code lockAtLeastFor} after an unlock), which a release at
 * close would cut short. Once closed, nothing more is taken in: a grant that arrives afterwards is
 * released at once ({@link #add} answers false).
 */
final class Holdings {
    private static final System.Logger LOG = System.getLogger(Holdings.class.getName());

    private final Set<AsyncCloseable> open = ConcurrentHashMap.newKeySet();
    private boolean closed;

    /** Takes {@code held} in; false (and nothing done) once the client is closed. */
    synchronized boolean add(AsyncCloseable held) {
        if (closed) {
            return false;
        }
        open.add(held);
        return true;
    }

    /** {@code held} was let go of (closed by its owner): close() need not. */
    void remove(AsyncCloseable held) {
        open.remove(held);
    }

    synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Closes what is still open, all at once, waiting at most {@code withinMs} for the server's
     * answers; a lock or session already gone (lost, expired, force-released) is no failure here,
     * and one whose release is not answered in time ends with its lease.
     */
    void closeAll(long withinMs) {
        List<AsyncCloseable> left;
        synchronized (this) {
            closed = true;
            left = new ArrayList<>(open);
        }
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (AsyncCloseable held : left) {
            CompletableFuture<Void> one;
            try {
                one = held.closeAsync();
            } catch (RuntimeException e) {
                one = CompletableFuture.failedFuture(e);
            }
            closing.add(one.handle((ok, error) -> {
                if (error != null) {
                    LOG.log(System.Logger.Level.DEBUG, "closing the client: {0} was already gone: {1}", held, error);
                }
                return null;
            }));
        }
        try {
            CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new)).get(withinMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "closing the client: not every release was answered within {0} ms; "
                            + "those locks end with their leases",
                    withinMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            // each one's failure was handled above
        }
    }
}
