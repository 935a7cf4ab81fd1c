package org.eslm.client.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockNotHeldException;
import org.eslm.client.errors.LockTransportException;
import org.eslm.client.errors.SessionNotFoundException;

/**
 * Renews a lease (a lock's, or a session's keep-alive) at a fraction of it while it is held, and
 * says when it is lost: at once when the server reports it gone (404), or when renewals kept
 * failing until the lease, as this client last knew it, ran out. Time is measured with
 * {@link System#nanoTime()} only; the lease itself ends on the server's clock.
 *
 * <p>Unlike a watchdog that only logs a failed renewal, the loss reaches the holder: {@code
 * onLost} runs once, and the holder's {@code close()} throws. A renewal that hangs (no answer
 * before the socket timeout) does not delay the loss: each renewal also schedules a check at the
 * lease's end, which reports the loss then unless a renewal succeeded meanwhile, so a leader
 * never believes it leads past the end of its lease (docs/API.md "Elections").
 */
public final class Watchdog {
    /** How a renewal is made: given the milliseconds left, the new lease in milliseconds. */
    @FunctionalInterface
    public interface Renewal {
        CompletableFuture<Long> renew(long budgetMs);
    }

    /** Pause before trying again after a renewal failed for another reason than a 404. */
    static final long RETRY_PAUSE_MS = 200;

    private final ScheduledExecutorService scheduler;
    private final long intervalMs;
    private final Renewal renewal;
    private final Consumer<LockException> onLost;
    private volatile long expiresAt;
    private boolean stopped;
    private ScheduledFuture<?> next;

    /**
     * @param intervalMs time between renewals (a fraction of the lease)
     * @param onLost called once, on a scheduler thread, when the lease is lost
     */
    public Watchdog(
            ScheduledExecutorService scheduler, long intervalMs, Renewal renewal, Consumer<LockException> onLost) {
        this.scheduler = scheduler;
        this.intervalMs = Math.max(1, intervalMs);
        this.renewal = renewal;
        this.onLost = onLost;
    }

    /**
     * Starts renewing a lease of {@code leaseMs} that began no earlier than {@code startNanos}: the
     * first renewal one interval after that start, not after now, so a grant that took long to
     * arrive is not renewed late.
     */
    public void start(long startNanos, long leaseMs) {
        expiresAt = startNanos + TimeUnit.MILLISECONDS.toNanos(leaseMs);
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        schedule(Math.max(1, intervalMs - elapsedMs));
    }

    /** No renewal starts after this returns (one in flight finishes unseen). */
    public synchronized void stop() {
        stopped = true;
        if (next != null) {
            next.cancel(false);
        }
    }

    private synchronized boolean isStopped() {
        return stopped;
    }

    private synchronized void schedule(long delayMs) {
        if (stopped) {
            return;
        }
        try {
            next = scheduler.schedule(this::renewNow, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException clientClosed) {
            stopped = true;
        }
    }

    private void renewNow() {
        long sentAt = System.nanoTime();
        long left = Retrier.millisUntil(expiresAt);
        if (isStopped()) {
            return;
        }
        if (left <= 0) {
            lose(new LockTransportException(0, "the lease ran out before a renewal succeeded", null));
            return;
        }
        scheduleDeadlineCheck(left);
        CompletableFuture<Long> renewed;
        try {
            renewed = renewal.renew(left);
        } catch (RuntimeException e) {
            renewed = CompletableFuture.failedFuture(e);
        }
        renewed.whenComplete((leaseMs, error) -> {
            if (error == null) {
                expiresAt = sentAt + TimeUnit.MILLISECONDS.toNanos(leaseMs);
                schedule(intervalMs);
            } else {
                failed(Retrier.unwrap(error));
            }
        });
    }

    /** In {@code leftMs}, the loss if the lease ran out with no renewal succeeding meanwhile. */
    private synchronized void scheduleDeadlineCheck(long leftMs) {
        if (stopped) {
            return;
        }
        try {
            scheduler.schedule(
                    () -> {
                        if (Retrier.millisUntil(expiresAt) <= 0) {
                            lose(new LockTransportException(0, "the lease ran out before a renewal answered", null));
                        }
                    },
                    leftMs,
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException clientClosed) {
            stopped = true;
        }
    }

    private void failed(Throwable cause) {
        LockException error = cause instanceof LockException known
                ? known
                : new LockTransportException(0, String.valueOf(cause), cause);
        boolean gone = error instanceof LockNotHeldException || error instanceof SessionNotFoundException;
        if (!gone && Retrier.millisUntil(expiresAt) > RETRY_PAUSE_MS) {
            schedule(RETRY_PAUSE_MS);
        } else {
            lose(error);
        }
    }

    private void lose(LockException cause) {
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
        }
        onLost.accept(cause);
    }
}
