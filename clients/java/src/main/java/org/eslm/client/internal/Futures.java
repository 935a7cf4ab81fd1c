package org.eslm.client.internal;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;

/** CompletableFuture plumbing the plain API lacks. */
public final class Futures {
    private Futures() {}

    /**
     * {@code source} mapped by {@code fn}, where cancelling the result cancels {@code source} (so
     * a cancelled acquire aborts its request), and a value that arrives after the result was
     * cancelled is handed to {@code discard} (so a grant nobody will see is given back).
     */
    public static <A, B> CompletableFuture<B> map(CompletableFuture<A> source, Function<A, B> fn, Consumer<B> discard) {
        CompletableFuture<B> result = new CompletableFuture<>();
        result.whenComplete((value, error) -> {
            if (result.isCancelled()) {
                source.cancel(true);
            }
        });
        source.whenComplete((value, error) -> {
            if (error != null) {
                result.completeExceptionally(Retrier.unwrap(error));
                return;
            }
            B mapped;
            try {
                mapped = fn.apply(value);
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
                return;
            }
            if (!result.complete(mapped)) {
                discard.accept(mapped);
            }
        });
        return result;
    }

    /**
     * Like {@link #map}, where {@code fn} answers asynchronously: a value of {@code fn} that
     * arrives after the result was cancelled is handed to {@code discard}.
     */
    public static <A, B> CompletableFuture<B> compose(
            CompletableFuture<A> source, Function<A, CompletableFuture<B>> fn, Consumer<B> discard) {
        CompletableFuture<B> result = new CompletableFuture<>();
        result.whenComplete((value, error) -> {
            if (result.isCancelled()) {
                source.cancel(true);
            }
        });
        source.whenComplete((value, error) -> {
            if (error != null) {
                result.completeExceptionally(Retrier.unwrap(error));
                return;
            }
            CompletableFuture<B> next;
            try {
                next = fn.apply(value);
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
                return;
            }
            next.whenComplete((mapped, failure) -> {
                if (failure != null) {
                    result.completeExceptionally(Retrier.unwrap(failure));
                } else if (!result.complete(mapped)) {
                    discard.accept(mapped);
                }
            });
        });
        return result;
    }
}
