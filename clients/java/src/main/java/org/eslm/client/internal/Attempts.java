package org.eslm.client.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A result reached through requests sent one after another ({@link Retrier}'s retries of a 503,
 * {@link WaitRounds}' rounds of a long wait): the first answer completes it, and cancelling it
 * cancels the request in flight (the server then drops a queued waiter).
 */
final class Attempts<T> {
    final CompletableFuture<T> result = new CompletableFuture<>();
    private final AtomicReference<CompletableFuture<T>> current = new AtomicReference<>();

    Attempts() {
        result.whenComplete((value, error) -> {
            CompletableFuture<T> inFlight = current.get();
            if (result.isCancelled() && inFlight != null) {
                inFlight.cancel(true);
            }
        });
    }

    /**
     * Sends {@code attempt} as the request in flight, unless the result is done already: its
     * answer completes the result, its failure (unwrapped) goes to {@code failed}, which sends
     * the next attempt or fails the result.
     */
    void send(Supplier<CompletableFuture<T>> attempt, Consumer<Throwable> failed) {
        if (result.isDone()) {
            return;
        }
        CompletableFuture<T> inFlight = attempt.get();
        current.set(inFlight);
        if (result.isCancelled()) {
            inFlight.cancel(true);
        }
        inFlight.whenComplete((value, error) -> {
            if (error == null) {
                result.complete(value);
            } else {
                failed.accept(Retrier.unwrap(error));
            }
        });
    }
}
