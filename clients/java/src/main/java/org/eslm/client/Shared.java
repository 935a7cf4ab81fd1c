package org.eslm.client;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * What every {@link LockClient} view of one builder shares: the requests, the watchdog's
 * scheduler, the executor answers are completed on when the client owns it (else null), and the
 * slots of the loss watches ({@link LockClientBuilder#lossWatches}), the open handles of each
 * grant ({@link Handles}), and what the client's listeners are told ({@link Events}).
 * Closed once, by the client built.
 */
record Shared(
        Requests requests,
        ScheduledExecutorService scheduler,
        double renewFraction,
        ExecutorService ownedCallbacks,
        Semaphore lossWatchSlots,
        Handles handles,
        Events events) {

    /** Renewal interval for a lease: the configured fraction of it, at least 1 ms. */
    long renewIntervalMs(long leaseMs) {
        return Math.max(1, (long) (leaseMs * renewFraction));
    }

    /** Whether the client was closed: its scheduler stopped. */
    boolean closed() {
        return scheduler.isShutdown();
    }

    void close() {
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
