package org.eslm.client;

import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eslm.client.errors.LockConflictException;
import org.junit.jupiter.api.Test;

/**
 * One owner per acquisition by default (issue 27): threads sharing one client exclude each other,
 * and reentrancy is asked for, per thread or by a shared owner.
 */
class OwnersTest extends NodeTest {
    private static final int ROUNDS = 40;

    /**
     * Two threads of one default client acquire one key at the same moment, round after round,
     * and hold it a while: with one owner per client the second got the first's grant back
     * (reentrant) and both were inside at once.
     */
    @Test
    void threadsSharingOneClientNeverHoldTheSameKeyAtOnce() throws Exception {
        String key = uniqueKey("shared-client");
        AcquireOptions options = AcquireOptions.defaults().withWait(Duration.ofSeconds(10));
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger mostInside = new AtomicInteger();
        CyclicBarrier together = new CyclicBarrier(2);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try (LockClient shared = builder().build()) {
            Runnable worker = () -> {
                for (int round = 0; round < ROUNDS; round++) {
                    awaitOther(together);
                    try (HeldLock lock = shared.acquire(key, options)) {
                        mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        pause(15);
                        inside.decrementAndGet();
                        assertFalse(lock.isLost());
                    }
                }
            };
            Future<?> first = threads.submit(worker);
            Future<?> second = threads.submit(worker);
            first.get(60, TimeUnit.SECONDS);
            second.get(60, TimeUnit.SECONDS);
        } finally {
            threads.shutdownNow();
        }
        assertEquals(1, mostInside.get(), "threads inside at once");
    }

    @Test
    void eachAcquisitionOfADefaultClientHasAnOwnerOfItsOwn() {
        String key = uniqueKey("own-owner");
        try (LockClient client = builder().build();
                HeldLock first = client.acquire(key)) {
            assertTrue(first.owner().startsWith(client.owner() + "/"), first.owner());
            assertEquals(4, first.owner().split("/").length, "<host>/<pid>/<random>/<n>: " + first.owner());
            assertThrows(
                    LockConflictException.class,
                    () -> client.acquire(key, AcquireOptions.defaults().tryOnce()),
                    "not reentrant by default");
            try (HeldLock other = client.acquire(uniqueKey("own-owner"))) {
                assertNotEquals(first.owner(), other.owner());
            }
        }
    }

    @Test
    void theReentrantViewNestsOnOneThreadAndExcludesOthers() throws Exception {
        String key = uniqueKey("reentrant-view");
        try (LockClient client = builder().build()) {
            LockClient mine = client.reentrant();
            try (HeldLock outer = mine.acquire(key)) {
                assertFalse(outer.isReentrant());
                try (HeldLock inner = client.reentrant().acquire(key)) {
                    assertTrue(inner.isReentrant());
                    assertEquals(outer.fencingToken(), inner.fencingToken());
                    assertEquals(outer.owner(), inner.owner());
                }
                assertTrue(client.isLocked(key), "still held after the inner block");
                assertEquals(
                        outer.owner(), client.lockInfo(key).holders().get(0).owner());
                ExecutorService other = Executors.newSingleThreadExecutor();
                try {
                    assertTrue(
                            other.submit(() -> mine.tryAcquire(key).isEmpty()).get(10, TimeUnit.SECONDS),
                            "another thread is another owner");
                } finally {
                    other.shutdownNow();
                }
            }
            assertFalse(client.isLocked(key), "released by the outer block");
        }
    }

    private static void awaitOther(CyclicBarrier barrier) {
        try {
            barrier.await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("the other thread did not come", e);
        }
    }
}
