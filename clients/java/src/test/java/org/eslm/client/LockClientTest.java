package org.eslm.client;

import static org.eslm.client.RealNode.holders;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eslm.client.errors.InvalidLockRequestException;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.LockWaitTimeoutException;
import org.junit.jupiter.api.Test;

/** Acquire and release, contention, waits, scopes: the single-key calls against a real node. */
class LockClientTest extends NodeTest {
    @Test
    void aLockIsHeldInsideTheBlockAndReleasedByClose() {
        String key = uniqueKey("basic");
        try (HeldLock lock = locks.acquire(key, AcquireOptions.defaults().withLease(Duration.ofSeconds(30)))) {
            assertEquals(key, lock.key());
            assertEquals(LockMode.EXCLUSIVE, lock.mode());
            assertTrue(lock.fencingToken() > 0);
            assertFalse(lock.isReentrant());
            assertTrue(lock.leaseMs() > 25_000 && lock.leaseMs() <= 30_000, "lease_ms " + lock.leaseMs());
            assertEquals(locks.owner(), holders(rest, key).get(0).get("owner").asText());
            assertEquals(
                    lock.fencingToken(),
                    holders(rest, key).get(0).get("fencing_token").asLong());
        }
        assertEquals(0, holders(rest, key).size());
    }

    @Test
    void aSecondOwnerIsRefusedUntilTheFirstReleases() {
        String key = uniqueKey("contention");
        LockClient first = owner("first");
        LockClient second = owner("second");
        HeldLock held = first.acquire(key);
        LockConflictException refused = assertThrows(
                LockConflictException.class,
                () -> second.acquire(key, AcquireOptions.defaults().tryOnce()));
        assertEquals(409, refused.status());
        assertEquals("lock_conflict_exception", refused.type());
        assertEquals(List.of(first.owner()), refused.holders());
        assertTrue(second.tryAcquire(key).isEmpty());
        held.close();
        try (HeldLock next = second.tryAcquire(key).orElseThrow()) {
            assertTrue(next.fencingToken() > held.fencingToken(), "tokens grow per key");
        }
    }

    @Test
    void aWaitThatRunsOutIsATimeoutNotAConflict() {
        String key = uniqueKey("timeout");
        try (HeldLock held = owner("holder").acquire(key)) {
            long start = System.nanoTime();
            LockWaitTimeoutException timedOut = assertThrows(LockWaitTimeoutException.class, () -> owner("waiter")
                    .acquire(key, AcquireOptions.defaults().withWait(Duration.ofMillis(400))));
            long waitedMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
            assertEquals(409, timedOut.status());
            assertEquals("lock_wait_timeout_exception", timedOut.type());
            assertTrue(waitedMs >= 400 && waitedMs < 10_000, "waited " + waitedMs + " ms");
            assertFalse(held.isLost());
        }
    }

    @Test
    void aSharedOwnerGetsItsGrantBackAndTheLastHandleReleases() {
        String key = uniqueKey("reentrant");
        try (HeldLock first = locks.acquire(key)) {
            try (HeldLock again = locks.acquire(key)) {
                assertTrue(again.isReentrant());
                assertEquals(first.fencingToken(), again.fencingToken());
            }
            assertTrue(locks.isLocked(key), "the outer handle still holds it");
        }
        assertFalse(locks.isLocked(key));
    }

    @Test
    void lockInfoNamesHoldersAndWaiters() throws Exception {
        String key = uniqueKey("info");
        assertFalse(locks.isLocked(key));
        assertEquals(List.of(), locks.lockInfo(key).holders());
        try (HeldLock held =
                owner("holder").acquire(key, AcquireOptions.defaults().withLease(Duration.ofSeconds(30)))) {
            var waiting =
                    owner("waiter").acquireAsync(key, AcquireOptions.defaults().withWait(Duration.ofSeconds(20)));
            RealNode.await(() -> waiters(key) == 1, Duration.ofSeconds(5), "queued");
            LockInfo info = locks.lockInfo(key);
            assertTrue(locks.isLocked(key));
            LockInfo.Holder holder = info.holders().get(0);
            assertEquals(held.owner(), holder.owner());
            assertEquals(held.fencingToken(), holder.fencingToken());
            assertEquals(LockMode.EXCLUSIVE, holder.mode());
            assertTrue(holder.leaseMs() > 0 && holder.leaseMs() <= 30_000, "lease " + holder.leaseMs());
            assertEquals(1, info.waiters().size());
            assertTrue(
                    info.waiters().get(0).owner().startsWith("waiter-"),
                    info.waiters().toString());
            waiting.cancel(true);
        }
    }

    @Test
    void forceReleaseEvictsTheHolderWhoseCloseThenReportsTheLoss() {
        String key = uniqueKey("force");
        HeldLock held = owner("evicted").acquire(key);
        assertEquals(Map.of(held.owner(), held.fencingToken()), locks.forceRelease(key, "test: holder gone"));
        assertFalse(locks.isLocked(key));
        assertEquals(Map.of(), locks.forceRelease(key, "nothing held"));
        assertThrows(LockLostException.class, held::close);
    }

    @Test
    void aLockDelayKeepsAForceReleasedKeyFromOthersButNotItsOwner() {
        String key = uniqueKey("delay");
        LockClient paused = locks.withOwner(uniqueKey("paused"));
        HeldLock held = paused.acquire(key, AcquireOptions.defaults().withLockDelay(Duration.ofSeconds(20)));
        locks.forceRelease(key, "test: holder looks gone");
        LockConflictException refused = assertThrows(
                LockConflictException.class,
                () -> locks.acquire(key, AcquireOptions.defaults().tryOnce()));
        long retryAfter = Long.parseLong(refused.details().get("retry_after_ms").toString());
        assertTrue(retryAfter > 0 && retryAfter <= 20_000, refused.getMessage());
        assertTrue(locks.tryAcquire(key, AcquireOptions.defaults()).isEmpty());
        try (HeldLock back = paused.acquire(key)) {
            assertTrue(back.fencingToken() > held.fencingToken(), "its owner takes it back");
        }
        assertThrows(IllegalArgumentException.class, () -> locks.semaphore(uniqueKey("sem"), 2)
                .acquire(AcquireOptions.defaults().withLockDelay(Duration.ofSeconds(1))));
    }

    @Test
    void aPreemptedHolderIsToldThenLosesItsLockToTheForegroundWaiter() throws Exception {
        String key = uniqueKey("preempt");
        List<Duration> told = new CopyOnWriteArrayList<>();
        HeldLock background = owner("batch")
                .acquire(
                        key,
                        AcquireOptions.defaults()
                                .withPriority(AcquireOptions.BACKGROUND)
                                .withLease(Duration.ofSeconds(2))
                                .withOnRevoke((lock, grace) -> told.add(grace)));
        try (HeldLock foreground = owner("ui")
                .acquire(
                        key,
                        AcquireOptions.defaults()
                                .withWait(Duration.ofSeconds(20))
                                .withPreempt(Duration.ofSeconds(3)))) {
            assertEquals(1, told.size());
            assertTrue(!told.get(0).isNegative() && told.get(0).compareTo(Duration.ofSeconds(3)) <= 0);
            assertEquals(told.get(0), background.revokeGrace().orElseThrow());
            assertTrue(foreground.fencingToken() > background.fencingToken());
            RealNode.await(background::isLost, Duration.ofSeconds(10), "the preempted holder finds its loss");
        }
        assertThrows(
                IllegalArgumentException.class,
                () -> locks.acquireAll(
                        List.of(LockTarget.of(key)), AcquireOptions.defaults().withPreempt(Duration.ofSeconds(1))));
    }

    @Test
    void treeLocksExcludeAncestorsButNotSiblings() {
        String root = "/" + uniqueKey("tree");
        try (HeldLock leaf =
                locks.acquire(root + "/eu/42", AcquireOptions.defaults().tree())) {
            assertEquals(LockScope.TREE, leaf.scope());
            LockClient other = owner("tree-other");
            assertTrue(other.tryAcquire(root, AcquireOptions.defaults().tree()).isEmpty());
            try (HeldLock sibling = other.tryAcquire(
                            root + "/us", AcquireOptions.defaults().tree().shared())
                    .orElseThrow()) {
                assertEquals(LockMode.SHARED, sibling.mode());
            }
            // The key scope is another namespace: the same text as a plain key is free.
            other.tryAcquire(root).orElseThrow().close();
        }
    }

    @Test
    void aHigherPriorityWaiterIsServedFirst() throws Exception {
        String key = uniqueKey("priority");
        HeldLock held = owner("holder").acquire(key);
        AcquireOptions waiting = AcquireOptions.defaults().withWait(Duration.ofSeconds(20));
        var background = owner("background").acquireAsync(key, waiting.withPriority(AcquireOptions.BACKGROUND));
        RealNode.await(() -> waiters(key) == 1, Duration.ofSeconds(5), "the background waiter queued");
        var urgent = owner("urgent").acquireAsync(key, waiting.withPriority(9));
        RealNode.await(() -> waiters(key) == 2, Duration.ofSeconds(5), "the urgent waiter queued");
        held.close();
        HeldLock first = urgent.get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertFalse(background.isDone(), "the earlier, lower-priority waiter still waits");
        first.close();
        background.get(10, java.util.concurrent.TimeUnit.SECONDS).close();
    }

    @Test
    void badInputIsItsOwnExceptionType() {
        String tooLong = "o".repeat(600);
        InvalidLockRequestException refused =
                assertThrows(InvalidLockRequestException.class, () -> locks.withOwner(tooLong)
                        .acquire(uniqueKey("bad")));
        assertEquals(400, refused.status());
        assertEquals("illegal_argument_exception", refused.type());
        assertTrue(refused.reason().contains("[owner]"), refused.reason());
    }

    static int waiters(String key) {
        return RealNode.http(rest, "GET", org.eslm.client.internal.Endpoints.lock(key), null)
                .body()
                .get("waiters")
                .size();
    }
}
