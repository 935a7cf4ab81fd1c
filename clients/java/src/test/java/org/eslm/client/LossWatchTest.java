package org.eslm.client;

import static org.eslm.client.RealNode.forceRelease;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.LockNotHeldException;
import org.junit.jupiter.api.Test;

/** Loss watches (docs/API.md "Watch a lock"): a force-released lock is reported lost at once. */
class LossWatchTest extends NodeTest {
    /** Long enough that no renewal (every 20 s) can be what reports the loss. */
    private static final Duration LEASE = Duration.ofSeconds(60);

    @Test
    void aForceReleaseIsReportedLostWithinASecond() throws InterruptedException {
        String key = uniqueKey("loss-watch");
        LostRecorder listener = new LostRecorder();
        long before = pendingRequests();
        HeldLock held =
                locks.acquire(key, AcquireOptions.defaults().withLease(LEASE)).onLost(listener);
        RealNode.await(() -> pendingRequests() > before, Duration.ofSeconds(10), "the loss watch reached the server");
        long forcedAt = System.nanoTime();
        assertEquals(200, forceRelease(rest, key).status());
        LockException cause = listener.awaitCause(Duration.ofSeconds(5), "the listener was told");
        long tookMs = (System.nanoTime() - forcedAt) / 1_000_000;
        assertTrue(tookMs < 1_000, "lost reported " + tookMs + " ms after the force-release");
        assertInstanceOf(LockNotHeldException.class, cause);
        assertTrue(cause.getMessage().contains("force_released"), cause.getMessage());
        assertThrows(LockLostException.class, held::close);
        assertEquals(1, listener.calls(), "told once");
    }

    @Test
    void watchAnswersUnchangedThenNotHeld() {
        String key = uniqueKey("watch-call");
        HeldLock held = owner("watched").acquire(key, AcquireOptions.defaults().withLease(LEASE));
        LockWatch unchanged = locks.watch(key, LockScope.KEY, held.fencingToken(), Duration.ofMillis(300));
        assertFalse(unchanged.changed());
        assertEquals(Optional.empty(), unchanged.reason());
        held.close();
        LockWatch gone = locks.watch(key, LockScope.KEY, held.fencingToken(), Duration.ofSeconds(10));
        assertTrue(gone.changed());
        assertEquals(Optional.of("not_held"), gone.reason());
        assertThrows(IllegalArgumentException.class, () -> locks.watch(key, LockScope.KEY, 0, Duration.ofSeconds(1)));
    }

    private static long pendingRequests() {
        return RealNode.http(rest, "GET", "/_locks/_node/diagnostics", null)
                .body()
                .get("pending_requests")
                .asLong();
    }
}
