package org.eslm.client.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.PartitionUnavailableException;

/**
 * Retries a request answered 503 {@code lock_partition_unavailable_exception} (a partition moving
 * or in recovery, docs/API.md "Errors": "retry") with a growing, jittered pause, never past the
 * caller's budget: an attempt whose pause would end beyond the deadline is not made, and the 503
 * reaches the caller. The pauses are scheduled, so no thread waits for them.
 */
public final class Retrier {
    static final long FIRST_PAUSE_MS = 50;
    static final long MAX_PAUSE_MS = 1_000;

    private final ScheduledExecutorService scheduler;
    private final Consumer<LockException> onRetry;

    /** {@code onRetry} is told of each 503 about to be retried (for the application's metrics). */
    public Retrier(ScheduledExecutorService scheduler, Consumer<LockException> onRetry) {
        this.scheduler = scheduler;
        this.onRetry = onRetry;
    }

    /**
     * Runs {@code attempt} until it succeeds, fails with anything but a 503, or the budget ends.
     * {@code attempt} receives the milliseconds left of the budget (a queued acquire asks the
     * server to wait that long). Cancelling the result cancels the attempt in flight.
     */
    public <T> CompletableFuture<T> run(long budgetMs, LongFunction<CompletableFuture<T>> attempt) {
        Attempts<T> attempts = new Attempts<>();
        attempt(attempts, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budgetMs), 0, attempt);
        return attempts.result;
    }

    private <T> void attempt(
            Attempts<T> attempts, long deadline, int number, LongFunction<CompletableFuture<T>> attempt) {
        attempts.send(() -> attempt.apply(millisUntil(deadline)), cause -> {
            long pause = pauseMs(number);
            boolean again = cause instanceof PartitionUnavailableException
                    && System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause) < deadline;
            if (!again) {
                attempts.result.completeExceptionally(cause);
                return;
            }
            try {
                onRetry.accept((PartitionUnavailableException) cause);
            } catch (RuntimeException ignored) {
                // an observer's failure must not change the request's fate
            }
            try {
                scheduler.schedule(
                        () -> attempt(attempts, deadline, number + 1, attempt), pause, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closed) {
                attempts.result.completeExceptionally(cause);
            }
        });
    }

    /** 50 ms, doubling up to 1 s, each cut by up to half at random so clients do not retry in step. */
    static long pauseMs(int number) {
        long pause = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS << Math.min(number, 10));
        return pause / 2 + ThreadLocalRandom.current().nextLong(pause / 2 + 1);
    }

    public static long millisUntil(long deadlineNanos) {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
    }

    /** The failure inside a CompletableFuture's wrapping. */
    public static Throwable unwrap(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }
}
