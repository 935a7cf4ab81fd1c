package org.eslm.client;

import static org.eslm.client.RealNode.holders;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockLostException;
import org.junit.jupiter.api.Test;

/** Multi-locks: all or nothing, released together, and each lock of the set loss-watched. */
class MultiLockTest extends NodeTest {
    @Test
    void allOrNothingThenReleasedTogether() {
        String a = uniqueKey("multi-a");
        String b = uniqueKey("multi-b");
        LockClient other = owner("other");
        List<LockTarget> both = List.of(LockTarget.of(a), LockTarget.of(b).shared());
        HeldLock blocker = other.acquire(b);
        assertThrows(
                LockConflictException.class,
                () -> locks.acquireAll(both, AcquireOptions.defaults().tryOnce()));
        assertEquals(0, holders(rest, a).size(), "nothing was taken when one key was busy");
        blocker.close();

        try (MultiLock multi = locks.acquireAll(both, AcquireOptions.defaults().withWait(Duration.ofSeconds(5)))) {
            assertEquals(2, multi.locks().size());
            assertEquals(LockMode.SHARED, multi.lock(b).orElseThrow().mode());
            assertTrue(other.tryAcquire(a).isEmpty());
            assertTrue(other.tryAcquire(b).isEmpty(), "a shared lock still excludes an exclusive one");
        }
        assertEquals(0, holders(rest, a).size());
        assertEquals(0, holders(rest, b).size());
    }

    @Test
    void eachLockOfTheSetIsLossWatched() throws InterruptedException {
        String a = uniqueKey("multi-watch-a");
        String b = uniqueKey("multi-watch-b");
        LostRecorder listener = new LostRecorder();
        long watchesBefore = watches();
        // A 60 s lease: no renewal (every 20 s) can be what reports the loss.
        MultiLock multi = locks.acquireAll(
                        List.of(LockTarget.of(a), LockTarget.of(b)),
                        AcquireOptions.defaults().withLease(Duration.ofSeconds(60)))
                .onLost(listener);
        RealNode.await(
                () -> watches() >= watchesBefore + 2, Duration.ofSeconds(10), "both locks' watches reached the server");
        long forcedAt = System.nanoTime();
        assertEquals(200, RealNode.forceRelease(rest, b).status());
        LockException cause = listener.awaitCause(Duration.ofSeconds(5), "the listener was told");
        long tookMs = (System.nanoTime() - forcedAt) / 1_000_000;
        assertTrue(tookMs < 1_000, "lost reported " + tookMs + " ms after the force-release");
        assertTrue(cause.getMessage().contains("force_released"), cause.getMessage());
        assertTrue(multi.lock(b).orElseThrow().isLost());
        assertTrue(!multi.lock(a).orElseThrow().isLost(), "only the force-released lock is lost");
        assertThrows(LockLostException.class, multi::close);
        assertEquals(0, holders(rest, a).size(), "the lock still held was released");
    }

    /** Watches waiting on the node now ({@code GET /_locks/_stats}). */
    private static long watches() {
        return RealNode.http(rest, "GET", "/_locks/_stats", null)
                .body()
                .path("total")
                .path("watches")
                .asLong();
    }

    @Test
    void aLockOfTheSetFoundGoneAtReleaseIsALoss() {
        String a = uniqueKey("multi-lost-a");
        String b = uniqueKey("multi-lost-b");
        MultiLock multi = locks.acquireAll(
                List.of(LockTarget.of(a), LockTarget.of(b)),
                AcquireOptions.defaults().withWatchdog(false));
        assertEquals(200, RealNode.forceRelease(rest, b).status());
        assertThrows(LockLostException.class, multi::close);
        assertTrue(multi.lock(b).orElseThrow().isLost());
        assertEquals(0, holders(rest, a).size(), "the lock still held was released");
    }
}
