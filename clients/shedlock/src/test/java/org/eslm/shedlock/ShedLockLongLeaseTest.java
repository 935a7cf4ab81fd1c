package org.eslm.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.eslm.client.RealNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@code lockAtMostFor} beyond the cluster's {@code locks.lease.max} (lowered to 1 s here) is
 * taken at the maximum and renewed until it has passed: it is held, and ends, when ShedLock says.
 */
class ShedLockLongLeaseTest {
    private static final Duration MAX = Duration.ofSeconds(1);

    @RegisterExtension
    static final ShedLockNode NODE = new ShedLockNode();

    @BeforeAll
    static void lowerTheMaximum() {
        setLeaseMax("\"1s\"", "\"500ms\"");
    }

    @AfterAll
    static void restoreTheMaximum() {
        setLeaseMax("null", "null");
    }

    @Test
    void aLockAtMostForBeyondTheMaximumIsHeldUntilItPasses() {
        LockManagerLockProvider provider = new LockManagerLockProvider(NODE.client, NODE.provider.keyOf(""));
        assertEquals(MAX, provider.maxLease());
        long start = System.nanoTime();
        SimpleLock lock = provider.lock(config("long", Duration.ofSeconds(3))).orElseThrow();
        assertTrue(NODE.holders("long").get(0).get("lease_ms").asLong() <= MAX.toMillis());
        pauseUntil(start, Duration.ofMillis(2_200));
        NODE.assertLocked("long"); // past two maximum leases: renewed
        RealNode.await(() -> NODE.holders("long").isEmpty(), Duration.ofSeconds(5), "free after lockAtMostFor");
        long tookMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
        assertTrue(tookMs >= 3_000 && tookMs < 4_500, "freed after " + tookMs + " ms, lockAtMostFor 3 s");
        lock.unlock(); // already ended: nothing to free
    }

    @Test
    void anExtensionBeyondTheMaximumIsHeldUntilItPasses() {
        LockManagerLockProvider provider = new LockManagerLockProvider(NODE.client, NODE.provider.keyOf(""));
        SimpleLock lock =
                provider.lock(config("extended", Duration.ofMillis(500))).orElseThrow();
        long start = System.nanoTime();
        SimpleLock extended =
                lock.extend(Duration.ofMillis(2_500), Duration.ZERO).orElseThrow();
        pauseUntil(start, Duration.ofMillis(1_800));
        NODE.assertLocked("extended");
        extended.unlock();
        NODE.assertUnlocked("extended");
    }

    private static void setLeaseMax(String max, String defaultLease) {
        RealNode.Answer answer = RealNode.http(
                NODE.rest,
                "PUT",
                "/_cluster/settings",
                "{\"persistent\":{\"locks.lease.max\":" + max + ",\"locks.lease.default\":" + defaultLease + "}}");
        assertEquals(200, answer.status(), answer.toString());
    }

    private static LockConfiguration config(String name, Duration atMost) {
        return new LockConfiguration(Instant.now(), name, atMost, Duration.ZERO);
    }

    private static void pauseUntil(long startNanos, Duration after) {
        long left = after.toMillis()
                - Duration.ofNanos(System.nanoTime() - startNanos).toMillis();
        if (left > 0) {
            try {
                Thread.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
