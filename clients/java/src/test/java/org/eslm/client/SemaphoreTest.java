package org.eslm.client;

import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockNotHeldException;
import org.eslm.client.errors.SemaphoreLimitMismatchException;
import org.eslm.client.internal.Endpoints;
import org.junit.jupiter.api.Test;

/** Semaphores (docs/API.md "Semaphores") through the client against a real node. */
class SemaphoreTest extends NodeTest {
    private static JsonNode state(String name) {
        return RealNode.http(rest, "GET", Endpoints.semaphore(name), null).body();
    }

    @Test
    void permitsAreHeldUntilClosedAndAFullSemaphoreRefuses() {
        String name = uniqueKey("sem");
        Semaphore api = owner("a").semaphore(name, 3);
        try (HeldLock two = api.acquire(2, AcquireOptions.defaults().withLease(Duration.ofSeconds(30)))) {
            assertEquals(2, two.permits());
            assertEquals(1, two.remaining(), "3 - 2 left after the grant");
            assertEquals(LockScope.SEMAPHORE, two.scope());
            assertEquals(3, state(name).get("limit").asInt());
            try (HeldLock one = owner("b").semaphore(name, 3).acquire(AcquireOptions.defaults())) {
                assertTrue(one.fencingToken() > two.fencingToken());
                assertEquals(0, one.remaining());
                assertThrows(LockConflictException.class, () -> owner("c")
                        .semaphore(name, 3)
                        .acquire(AcquireOptions.defaults().tryOnce()));
                assertTrue(owner("c")
                        .semaphore(name, 3)
                        .tryAcquire(1, AcquireOptions.defaults())
                        .isEmpty());
            }
            two.renew(Duration.ofSeconds(20));
        }
        assertEquals(0, state(name).get("holders").size());
    }

    @Test
    void anotherLimitWhileInUseIsRefusedNamingTheLimit() {
        String name = uniqueKey("sem");
        try (HeldLock held = owner("a").semaphore(name, 4).acquire(AcquireOptions.defaults())) {
            SemaphoreLimitMismatchException e = assertThrows(
                    SemaphoreLimitMismatchException.class,
                    () -> owner("b").semaphore(name, 5).acquire(AcquireOptions.defaults()));
            assertEquals(409, e.status());
            assertEquals(4, e.limit());
            assertFalse(held.isLost());
        }
        assertThrows(IllegalArgumentException.class, () -> locks.semaphore(name, 0));
        assertThrows(
                IllegalArgumentException.class, () -> locks.semaphore(name, 2).acquire(3, AcquireOptions.defaults()));
    }

    @Test
    void anAdministratorChangesTheLimitAndNothingHeldIsRevoked() throws Exception {
        String name = uniqueKey("sem");
        AcquireOptions waiting = AcquireOptions.defaults().withWait(Duration.ofSeconds(30));
        HeldLock three = owner("a").semaphore(name, 4).acquire(3, AcquireOptions.defaults());
        CompletableFuture<HeldLock> two = owner("b").semaphore(name, 4).acquireAsync(2, waiting);
        RealNode.await(() -> state(name).get("waiters").size() == 1, Duration.ofSeconds(10), "b queued");
        assertEquals(new SemaphoreLimitChange(name, 2, 4, 3), locks.setSemaphoreLimit(name, 2));
        assertEquals(2, state(name).get("limit").asInt());
        SemaphoreLimitMismatchException e = assertThrows(
                SemaphoreLimitMismatchException.class,
                () -> owner("c").semaphore(name, 4).acquire(AcquireOptions.defaults()));
        assertEquals(2, e.limit());
        three.renew(Duration.ofSeconds(20));
        assertFalse(three.isLost() || two.isDone(), "nothing revoked, nobody granted over the limit");
        three.close();
        try (HeldLock granted = two.get(20, TimeUnit.SECONDS)) {
            assertEquals(0, granted.remaining(), "2 of the new limit 2");
        }
        assertThrows(LockNotHeldException.class, () -> locks.setSemaphoreLimit(name, 3));
        assertThrows(IllegalArgumentException.class, () -> locks.setSemaphoreLimit(name, 0));
    }

    @Test
    void theWatchdogKeepsPermitsPastTheirLeaseAndWaitersNeverExceedTheLimit() throws Exception {
        String name = uniqueKey("sem");
        try (HeldLock held =
                owner("a").semaphore(name, 1).acquire(AcquireOptions.defaults().withLease(Duration.ofSeconds(1)))) {
            long until = System.nanoTime() + Duration.ofMillis(2500).toNanos();
            RealNode.await(() -> System.nanoTime() > until, Duration.ofSeconds(5), "2.5 s");
            assertFalse(held.isLost());
            assertEquals(1, state(name).get("holders").size());
        }
        AtomicInteger now = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Semaphore sem = owner("w" + i).semaphore(name, 2);
            workers.add(CompletableFuture.runAsync(() -> {
                for (int round = 0; round < 3; round++) {
                    try (HeldLock permit = sem.acquire(AcquireOptions.defaults().withWait(Duration.ofSeconds(30)))) {
                        assertEquals(1, permit.permits());
                        most.accumulateAndGet(now.incrementAndGet(), Math::max);
                        assertTrue(now.get() <= 2, "over the limit");
                        now.decrementAndGet();
                    }
                }
            }));
        }
        CompletableFuture.allOf(workers.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
        assertTrue(most.get() <= 2);
    }
}
