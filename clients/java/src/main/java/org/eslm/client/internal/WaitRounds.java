package org.eslm.client.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
        Attempts<T> rounds = new Attempts<>();
        long deadline =
                waitMs == UNTIL_GRANTED ? Long.MAX_VALUE : System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        next(rounds, deadline, SERVER_WAIT_MAX_MS, round);
        return rounds.result;
    }

    private static <T> void next(
            Attempts<T> rounds, long deadline, long capMs, LongFunction<CompletableFuture<T>> round) {
        boolean forever = deadline == Long.MAX_VALUE;
        rounds.send(() -> round.apply(forever ? capMs : Math.min(capMs, Retrier.millisUntil(deadline))), cause -> {
            if (cause instanceof LockWaitTimeoutException && (forever || Retrier.millisUntil(deadline) > 0)) {
                next(rounds, deadline, capMs, round);
                return;
            }
            long lower = cause instanceof InvalidLockRequestException refused ? waitMaxMs(refused.reason()) : -1;
            if (lower > 0 && lower < capMs) {
                next(rounds, deadline, lower, round);
                return;
            }
            rounds.result.completeExceptionally(cause);
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
