package org.eslm.client;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * What every {@link LockClient} view of one builder shares: the requests, the watchdog's
 * scheduler, the executor answers are completed on when the client owns it (else null), and the
 * slots of the loss watches ({@link LockClientBuilder#lossWatches}), the open handles of each
 * grant ({@link Handles}), what the client's listeners are told ({@link Events}), and the locks
 * and sessions its close() lets go of ({@link Holdings}).
 * Closed once, by the client built.
 */
record Shared(
        Requests requests,
        ScheduledExecutorService scheduler,
        double renewFraction,
        ExecutorService ownedCallbacks,
        Semaphore lossWatchSlots,
        Handles handles,
        Events events,
        Holdings holdings) {

    /** How long close() waits for its releases beyond the retry budget: their round trip. */
    static final long CLOSE_MARGIN_MS = 5_000;

    /** Renewal interval for a lease: the configured fraction of it, at least 1 ms. */
    long renewIntervalMs(long leaseMs) {
        return Math.max(1, (long) (leaseMs * renewFraction));
    }

    /** Whether the client was closed: its scheduler stopped. */
    boolean closed() {
        return scheduler.isShutdown();
    }

    /**
     * Releases what {@link #holdings} still holds, waiting at most the retry budget and {@link
     * #CLOSE_MARGIN_MS} for the answers, then stops the threads.
     */
    void close() {
        holdings.closeAll(requests.retryBudgetMs() + CLOSE_MARGIN_MS);
        scheduler.shutdownNow();
        if (ownedCallbacks != null) {
            ownedCallbacks.shutdown();
            try {
                ownedCallbacks.awaitTermination(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
