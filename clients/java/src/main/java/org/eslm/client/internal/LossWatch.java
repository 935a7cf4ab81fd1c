package org.eslm.client.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockNotHeldException;

/**
 * Watches one grant while it is held, one long poll ({@code GET /_locks/{key}/_watch}) after
 * another, so a lock the server ends (force-released, expired) is reported lost at once rather
 * than at the next renewal (docs/API.md "Watch a lock"). Each poll holds one connection of the
 * REST client's pool, so a client watches at most as many grants as it has {@code slots}; a grant
 * beyond them relies on its renewals. A failed poll is tried again after a pause; a refused one
 * (400) stops the watch. With an {@code onRevoke}, the polls also answer a request to yield
 * (docs/API.md "Preemption"), told once; the watch then goes on for the end.
 */
public final class LossWatch {
    /** One poll: the watch's answer after at most {@code waitMs}; with {@code revoke} also a request to yield. */
    @FunctionalInterface
    public interface Poll {
        CompletableFuture<JsonNode> watch(long waitMs, boolean revoke);
    }

    /** Pause before polling again after a poll failed. */
    static final long RETRY_PAUSE_MS = 1_000;

    private final ScheduledExecutorService scheduler;
    private final Semaphore slots;
    private final long waitMs;
    private final Poll poll;
    private final Consumer<LockException> onLost;
    /** Told the grace (ms) of a request to yield, once; null: such requests are not asked for. */
    private final LongConsumer onRevoke;

    private volatile boolean revokeNotices;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private volatile CompletableFuture<JsonNode> inFlight;

    public LossWatch(
            ScheduledExecutorService scheduler,
            Semaphore slots,
            long waitMs,
            Poll poll,
            Consumer<LockException> onLost,
            LongConsumer onRevoke) {
        this.scheduler = scheduler;
        this.slots = slots;
        this.waitMs = Math.max(1_000, waitMs);
        this.poll = poll;
        this.onLost = onLost;
        this.onRevoke = onRevoke;
        this.revokeNotices = onRevoke != null;
    }

    /** Starts watching if a slot is free; false (and nothing started) otherwise. */
    public boolean start() {
        if (!slots.tryAcquire()) {
            stopped.set(true);
            return false;
        }
        next();
        return true;
    }

    /** Stops watching: the poll in flight is aborted, which cancels the watch on the server. */
    public void stop() {
        if (stopped.compareAndSet(false, true)) {
            slots.release();
            CompletableFuture<JsonNode> poll = inFlight;
            if (poll != null) {
                poll.cancel(true);
            }
        }
    }

    private void next() {
        if (stopped.get()) {
            return;
        }
        CompletableFuture<JsonNode> answer;
        try {
            answer = poll.watch(waitMs, revokeNotices);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        inFlight = answer;
        answer.whenComplete((body, error) -> {
            if (stopped.get()) {
                return;
            }
            if (error == null) {
                answered(body);
            } else {
                failed(Retrier.unwrap(error));
            }
        });
    }

    private void answered(JsonNode body) {
        if (revokeNotices && "revoke_requested".equals(body.path("reason").asText())) {
            revokeNotices = false; // told once; the next polls wait for the end
            onRevoke.accept(body.path("grace_ms").asLong());
            next();
            return;
        }
        if (!body.path("changed").asBoolean()) {
            next();
            return;
        }
        // An election's observe has no reason: the leadership's term is no longer the current one.
        String reason = body.path("reason").asText("its term ended");
        stop();
        onLost.accept(
                new LockNotHeldException(404, "the server ended the lock (" + reason + ")", Map.of("reason", reason)));
    }

    private void failed(Throwable cause) {
        if (cause instanceof LockException refused && refused.status() == 400) {
            stop(); // renewals alone will find a loss
            return;
        }
        try {
            scheduler.schedule(this::next, RETRY_PAUSE_MS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException clientClosed) {
            stop();
        }
    }
}
