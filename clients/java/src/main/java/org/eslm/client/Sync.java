package org.eslm.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.eslm.client.errors.LockInterruptedException;
import org.eslm.client.errors.LockTransportException;
import org.eslm.client.internal.Retrier;

/** The blocking calls are their asynchronous twins awaited: one code path for both. */
final class Sync {
    private Sync() {}

    /**
     * The future's value, or its failure thrown as is (a {@code LockException}). Bounded: every
     * request ends by the server's answer or the socket timeout. An interrupt cancels the request.
     */
    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new LockInterruptedException(e);
        } catch (ExecutionException e) {
            Throwable cause = Retrier.unwrap(e);
            if (cause instanceof RuntimeException unchecked) {
                throw unchecked;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new LockTransportException(0, String.valueOf(cause), cause);
        }
    }
}
