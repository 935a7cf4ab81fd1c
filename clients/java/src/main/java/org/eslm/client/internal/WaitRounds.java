package org.eslm.client.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eslm.client.errors.InvalidLockRequestException;
import org.eslm.client.errors.LockWaitTimeoutException;

/**
 * An acquire's wait, as every lock library waits: until granted, or for a bound. One request may
 * queue on the server at most {@code locks.wait.max} (5 minutes unless an operator changed it),
 * so a longer wait goes out in rounds: when a round's wait runs out with time left, the acquire
 * is sent again (under the same acquisition) with what is left. A cluster whose maximum is lower
 * names it in the 400 that refuses a longer round, and the rounds keep to it from then on. No
 * thread waits between rounds; cancelling the result cancels the round in flight.
 */
public final class WaitRounds {
    /** A wait that lasts until the grant: {@code AcquireOptions.maxWait()} null. */
    public static final long UNTIL_GRANTED = -1;
    /** The server's default {@code locks.wait.max}, the longest round sent until told less. */
    static final long SERVER_WAIT_MAX_MS = TimeUnit.MINUTES.toMillis(5);

    private static final Pattern WAIT_MAX =
            Pattern.compile("\\[wait\\] must be at most \\[([^\\]]+)\\] \\(locks\\.wait\\.max\\)");

    private WaitRounds() {}

    /** {@code wait} in milliseconds, or {@link #UNTIL_GRANTED} for null. */
    public static long millis(Duration wait) {
        return wait == null ? UNTIL_GRANTED : Durations.millis(wait, "wait");
    }

    /**
     * Sends {@code round(ms)} (one request queuing at most {@code ms}, with its 503 retries) until
     * it is granted, fails with anything but a wait that ran out early, or {@code waitMs} is over.
     */
    public static <T> CompletableFuture<T> run(long waitMs, LongFunction<CompletableFuture<T>> round) {
        CompletableFuture<T> result = new CompletableFuture<>();
        AtomicReference<CompletableFuture<T>> current = new AtomicReference<>();
        result.whenComplete((value, error) -> {
            CompletableFuture<T> inFlight = current.get();
            if (result.isCancelled() && inFlight != null) {
                inFlight.cancel(true);
            }
        });
        long deadline =
                waitMs == UNTIL_GRANTED ? Long.MAX_VALUE : System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        next(result, current, deadline, SERVER_WAIT_MAX_MS, round);
        return result;
    }

    private static <T> void next(
            CompletableFuture<T> result,
            AtomicReference<CompletableFuture<T>> current,
            long deadline,
            long capMs,
            LongFunction<CompletableFuture<T>> round) {
        if (result.isDone()) {
            return;
        }
        boolean forever = deadline == Long.MAX_VALUE;
        CompletableFuture<T> inFlight = round.apply(forever ? capMs : Math.min(capMs, Retrier.millisUntil(deadline)));
        current.set(inFlight);
        if (result.isCancelled()) {
            inFlight.cancel(true);
        }
        inFlight.whenComplete((value, error) -> {
            if (error == null) {
                result.complete(value);
                return;
            }
            Throwable cause = Retrier.unwrap(error);
            if (cause instanceof LockWaitTimeoutException && (forever || Retrier.millisUntil(deadline) > 0)) {
                next(result, current, deadline, capMs, round);
                return;
            }
            long lower = cause instanceof InvalidLockRequestException refused ? waitMaxMs(refused.reason()) : -1;
            if (lower > 0 && lower < capMs) {
                next(result, current, deadline, lower, round);
                return;
            }
            result.completeExceptionally(cause);
        });
    }

    /** The cluster's {@code locks.wait.max} named in a refusal of a longer wait, else -1. */
    static long waitMaxMs(String reason) {
        Matcher m = reason == null ? null : WAIT_MAX.matcher(reason);
        if (m == null || !m.find()) {
            return -1;
        }
        try {
            return Durations.parse(m.group(1)).toMillis();
        } catch (IllegalArgumentException notWhole) {
            return -1; // e.g. [1.5s]: keep the rounds we have, the refusal reaches the caller
        }
    }
}
