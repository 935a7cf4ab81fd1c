package org.eslm.client;

import java.util.concurrent.CompletableFuture;

/**
 * A handle released by one request: {@link #closeAsync()} sends it, {@link #close()} awaits it (so
 * try-with-resources works), one code path for both.
 */
public interface AsyncCloseable extends AutoCloseable {
    /** Releases without blocking; completes when the server answered. Idempotent. */
    CompletableFuture<Void> closeAsync();

    /**
     * Releases and waits for the answer (idempotent: a second close does nothing).
     *
     * @throws org.eslm.client.errors.LockLostException if what it held was lost meanwhile
     */
    @Override
    default void close() {
        Sync.await(closeAsync());
    }
}
