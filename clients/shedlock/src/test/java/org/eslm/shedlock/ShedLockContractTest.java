package org.eslm.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.eslm.client.RealNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's documented contract (its README: "lockAtMostFor", "lockAtLeastFor", "Extending the
 * lock"), each clause against the real node, including the two faults of ShedLock's own
 * Elasticsearch provider that this one must not have: a holder whose lock expired freeing or
 * extending the next holder's lock.
 */
class ShedLockContractTest {
    private static final Duration LONG = Duration.ofMinutes(1);
    private static ShedLockNode node;

    @BeforeAll
    static void connect() {
        node = new ShedLockNode();
    }

    @AfterAll
    static void disconnect() throws IOException {
        node.close();
    }

    @Test
    void aSecondLockOfAHeldNameFailsAndUnlockFreesIt() {
        String name = "second-lock";
        SimpleLock first = lock(name, LONG, Duration.ZERO).orElseThrow();
        assertTrue(lock(name, LONG, Duration.ZERO).isEmpty(), "the same provider");
        LockManagerLockProvider elsewhere =
                new LockManagerLockProvider(node.client.withOwner("another-scheduler"), node.provider.keyOf(""));
        assertTrue(elsewhere.lock(config(name, LONG, Duration.ZERO)).isEmpty(), "another scheduler");
        first.unlock();
        node.assertUnlocked(name);
        lock(name, LONG, Duration.ZERO).orElseThrow().unlock();
    }

    @Test
    void lockAtLeastForHoldsTheLockAfterUnlockUntilItPasses() {
        String name = "at-least";
        Duration atLeast = Duration.ofSeconds(2);
        long start = System.nanoTime();
        lock(name, LONG, atLeast).orElseThrow().unlock();
        assertTrue(lock(name, LONG, Duration.ZERO).isEmpty(), "still held right after unlock");
        long leaseLeft = node.holders(name).get(0).get("lease_ms").asLong();
        assertTrue(
                leaseLeft <= atLeast.toMillis(), "the lease was cut to what is left of lockAtLeastFor: " + leaseLeft);
        RealNode.await(() -> node.holders(name).isEmpty(), Duration.ofSeconds(10), "freed after lockAtLeastFor");
        long heldMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
        assertTrue(heldMs >= atLeast.toMillis() - 50, "held " + heldMs + " ms"); // 50 ms: the server's tick
        lock(name, LONG, Duration.ZERO).orElseThrow().unlock();
    }

    @Test
    void aLockPastLockAtMostForCanBeTakenAgain() {
        String name = "at-most";
        Duration atMost = Duration.ofMillis(800);
        long start = System.nanoTime();
        SimpleLock abandoned = lock(name, atMost, Duration.ZERO).orElseThrow(); // its holder "died"
        assertTrue(lock(name, LONG, Duration.ZERO).isEmpty());
        List<SimpleLock> taken = new ArrayList<>();
        RealNode.await(
                () -> lock(name, LONG, Duration.ZERO).map(taken::add).orElse(false),
                Duration.ofSeconds(10),
                "taken again after lockAtMostFor");
        long ms = Duration.ofNanos(System.nanoTime() - start).toMillis();
        assertTrue(ms >= atMost.toMillis() - 50, "not before lockAtMostFor: " + ms + " ms");
        abandoned.unlock(); // the late holder's unlock must not free the new holder's lock
        node.assertLocked(name);
        taken.get(0).unlock();
        node.assertUnlocked(name);
    }

    @Test
    void extendWorksForTheHolderOnly() {
        String name = "extend";
        SimpleLock held = lock(name, Duration.ofSeconds(1), Duration.ZERO).orElseThrow();
        SimpleLock extended = held.extend(Duration.ofSeconds(30), Duration.ZERO).orElseThrow();
        long leaseLeft = node.holders(name).get(0).get("lease_ms").asLong();
        assertTrue(leaseLeft > 20_000, "extended on the server: " + leaseLeft);
        extended.unlock();

        SimpleLock stale = lock(name, Duration.ofMillis(300), Duration.ZERO).orElseThrow();
        List<SimpleLock> next = new ArrayList<>();
        RealNode.await(
                () -> lock(name, LONG, Duration.ZERO).map(next::add).orElse(false),
                Duration.ofSeconds(10),
                "the stale lock expired and another took the name");
        assertTrue(stale.extend(LONG, Duration.ZERO).isEmpty(), "a lock that ran out cannot be extended");
        long nextLease = node.holders(name).get(0).get("lease_ms").asLong();
        assertTrue(nextLease <= LONG.toMillis(), "the new holder's lease is untouched");
        next.get(0).unlock();
        node.assertUnlocked(name);
    }

    @Test
    void manyThreadsLockingOneNameNeverRunTheTaskConcurrently() throws Exception {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(node.provider);
        LockConfiguration config = config("concurrent", LONG, Duration.ZERO);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        AtomicInteger runs = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        List<Future<?>> workers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            workers.add(threads.submit(() -> {
                while (System.nanoTime() < end) {
                    executor.executeWithLock(
                            (Runnable) () -> {
                                mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
                                busy(Duration.ofMillis(5));
                                runs.incrementAndGet();
                                running.decrementAndGet();
                            },
                            config);
                }
            }));
        }
        for (Future<?> worker : workers) {
            worker.get(30, TimeUnit.SECONDS);
        }
        threads.shutdown();
        assertEquals(1, mostAtOnce.get(), "runs at once");
        assertTrue(runs.get() >= 10, "the task ran " + runs.get() + " times");
        assertFalse(node.holders("concurrent").size() > 0, "free at the end");
    }

    private static Optional<SimpleLock> lock(String name, Duration atMost, Duration atLeast) {
        return node.provider.lock(config(name, atMost, atLeast));
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, atMost, atLeast);
    }

    /** Work inside the lock that takes time, so overlapping runs would be seen. */
    private static void busy(Duration time) {
        try {
            Thread.sleep(time.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
