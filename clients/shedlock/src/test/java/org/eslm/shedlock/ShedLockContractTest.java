package org.eslm.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's documented contract (its README: "lockAtMostFor", "lockAtLeastFor", "Extending the
 * lock"), each clause against the real node, including the two faults of ShedLock's own
 * Elasticsearch provider that this one must not have: a holder whose lock expired freeing or
 * extending the next holder's lock.
 */
class ShedLockContractTest {
    private static final Duration LONG = Duration.ofMinutes(1);
    /** How many runs the contention test waits for, and its bound: liveness, not speed. */
    private static final int RUNS = 20;

    private static final Duration RUNS_BOUND = Duration.ofSeconds(120);

    @RegisterExtension
    static final ShedLockNode NODE = new ShedLockNode();

    @Test
    void aSecondLockOfAHeldNameFailsAndUnlockFreesIt() {
        String name = "second-lock";
        SimpleLock first = lockExclusively(name, LONG, Duration.ZERO);
        LockManagerLockProvider elsewhere =
                new LockManagerLockProvider(NODE.client.withOwner("another-scheduler"), NODE.provider.keyOf(""));
        assertTrue(elsewhere.lock(config(name, LONG, Duration.ZERO)).isEmpty(), "another scheduler");
        first.unlock();
        NODE.assertUnlocked(name);
        assertLockable(name);
    }

    @Test
    void lockAtLeastForHoldsTheLockAfterUnlockUntilItPasses() {
        String name = "at-least";
        Duration atLeast = Duration.ofSeconds(2);
        long start = System.nanoTime();
        lockExclusively(name, LONG, atLeast).unlock();
        assertTrue(lock(name, LONG, Duration.ZERO).isEmpty(), "still held right after unlock");
        long leaseLeft = NODE.holders(name).get(0).get("lease_ms").asLong();
        assertTrue(
                leaseLeft <= atLeast.toMillis(), "the lease was cut to what is left of lockAtLeastFor: " + leaseLeft);
        RealNode.await(() -> NODE.holders(name).isEmpty(), Duration.ofSeconds(10), "freed after lockAtLeastFor");
        assertNotBefore(atLeast, start);
        assertLockable(name);
    }

    @Test
    void aLockPastLockAtMostForCanBeTakenAgain() {
        String name = "at-most";
        Duration atMost = Duration.ofMillis(800);
        long start = System.nanoTime();
        SimpleLock abandoned = lockExclusively(name, atMost, Duration.ZERO); // its holder "died"
        SimpleLock taken = awaitTakenAgain(name);
        assertNotBefore(atMost, start);
        abandoned.unlock(); // the late holder's unlock must not free the new holder's lock
        NODE.assertLocked(name);
        taken.unlock();
        NODE.assertUnlocked(name);
    }

    @Test
    void extendWorksForTheHolderOnly() {
        String name = "extend";
        SimpleLock held = lock(name, Duration.ofSeconds(1), Duration.ZERO).orElseThrow();
        SimpleLock extended = held.extend(Duration.ofSeconds(30), Duration.ZERO).orElseThrow();
        long leaseLeft = NODE.holders(name).get(0).get("lease_ms").asLong();
        assertTrue(leaseLeft > 20_000, "extended on the server: " + leaseLeft);
        extended.unlock();

        SimpleLock stale = lock(name, Duration.ofMillis(300), Duration.ZERO).orElseThrow();
        SimpleLock next = awaitTakenAgain(name);
        assertTrue(stale.extend(LONG, Duration.ZERO).isEmpty(), "a lock that ran out cannot be extended");
        long nextLease = NODE.holders(name).get(0).get("lease_ms").asLong();
        assertTrue(nextLease <= LONG.toMillis(), "the new holder's lease is untouched");
        next.unlock();
        NODE.assertUnlocked(name);
    }

    @Test
    void manyThreadsLockingOneNameNeverRunTheTaskConcurrently() throws Exception {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(NODE.provider);
        LockConfiguration config = config("concurrent", LONG, Duration.ZERO);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        AtomicInteger runs = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        // Contention until the task has run RUNS times: a count, not a time, so a loaded machine
        // makes the test slower, not red. The deadline only bounds a run whose lock never frees.
        long deadline = System.nanoTime() + RUNS_BOUND.toNanos();
        List<Future<?>> workers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            workers.add(threads.submit(() -> {
                while (runs.get() < RUNS && System.nanoTime() < deadline) {
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
            worker.get(RUNS_BOUND.toSeconds() + 30, TimeUnit.SECONDS);
        }
        threads.shutdown();
        assertEquals(1, mostAtOnce.get(), "runs at once");
        assertTrue(runs.get() >= RUNS, "the task ran " + runs.get() + " times in " + RUNS_BOUND);
        assertFalse(NODE.holders("concurrent").size() > 0, "free at the end");
    }

    /** Locks {@code name}, checking that a second lock of it (the same provider) fails meanwhile. */
    private static SimpleLock lockExclusively(String name, Duration atMost, Duration atLeast) {
        SimpleLock lock = lock(name, atMost, atLeast).orElseThrow();
        assertTrue(lock(name, LONG, Duration.ZERO).isEmpty(), name + " was locked twice");
        return lock;
    }

    /** {@code name} can be locked (and is unlocked again). */
    private static void assertLockable(String name) {
        lock(name, LONG, Duration.ZERO).orElseThrow().unlock();
    }

    /** The name locked again once its holder's lease ran out (polled, at most 10 s). */
    private static SimpleLock awaitTakenAgain(String name) {
        List<SimpleLock> taken = new ArrayList<>();
        RealNode.await(
                () -> lock(name, LONG, Duration.ZERO).map(taken::add).orElse(false),
                Duration.ofSeconds(10),
                name + " taken again after its lease ran out");
        return taken.get(0);
    }

    /**
     * At least {@code time} passed since {@code startNanos}, taken before the lock was requested:
     * the server's lease began later, so it cannot have ended sooner.
     */
    private static void assertNotBefore(Duration time, long startNanos) {
        long ms = Duration.ofNanos(System.nanoTime() - startNanos).toMillis();
        assertTrue(ms >= time.toMillis(), "after " + ms + " ms, expected " + time);
    }

    private static Optional<SimpleLock> lock(String name, Duration atMost, Duration atLeast) {
        return NODE.provider.lock(config(name, atMost, atLeast));
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
