package org.eslm.client;

import static org.eslm.client.RealNode.holders;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockLostException;
import org.junit.jupiter.api.Test;

/** Multi-locks: all or nothing, released together. */
class MultiLockTest extends NodeTest {
    @Test
    void allOrNothingThenReleasedTogether() {
        String a = uniqueKey("multi-a");
        String b = uniqueKey("multi-b");
        LockClient other = owner("other");
        List<LockTarget> both = List.of(LockTarget.of(a), LockTarget.of(b).shared());
        HeldLock blocker = other.acquire(b);
        assertThrows(LockConflictException.class, () -> locks.acquireAll(both, AcquireOptions.defaults()));
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
