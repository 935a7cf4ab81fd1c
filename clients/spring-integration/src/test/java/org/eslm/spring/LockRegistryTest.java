package org.eslm.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.elasticsearch.client.RestClient;
import org.eslm.client.LockClient;
import org.eslm.client.LockClientBuilder;
import org.eslm.client.RealNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The registry against a real node (RealNode: -Deslm.url), checking what Spring Integration's own
 * tests check of its Redis and JDBC registries: mutual exclusion across two registries, per-thread
 * reentrancy, a tryLock that times out, a lock lost when its ttl runs out, an unlock by a thread
 * that does not hold it, renewals, and unused locks forgotten.
 */
class LockRegistryTest {
    private static RestClient rest;
    private static LockClient client;
    private static String prefix;
    private static LockManagerLockRegistry one;
    private static LockManagerLockRegistry two;

    @BeforeAll
    static void connect() {
        rest = RealNode.restClient();
        client = LockClientBuilder.forRestClient(rest).build();
        prefix = "spring-it-" + UUID.randomUUID() + "-";
        one = new LockManagerLockRegistry(client, prefix);
        two = new LockManagerLockRegistry(client, prefix);
    }

    @AfterAll
    static void disconnect() throws Exception {
        client.close();
        rest.close();
    }

    private static JsonNode holders(String key) {
        return RealNode.holders(rest, prefix + key);
    }

    private static CompletableFuture<Boolean> inAnotherThread(Lock lock, Duration wait) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                boolean got = lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS);
                if (got) {
                    lock.unlock();
                }
                return got;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
    }

    @Test
    void twoRegistriesExcludeEachOtherAndTheWaiterIsGrantedOnUnlock() throws Exception {
        String key = "mutex-" + UUID.randomUUID();
        Lock first = one.obtain(key);
        Lock second = two.obtain(key);
        assertNotSame(first, second);
        assertSame(first, one.obtain(key), "a registry answers the same lock for a key");
        first.lock();
        assertEquals(1, holders(key).size());
        assertFalse(inAnotherThread(second, Duration.ofMillis(300)).get(10, TimeUnit.SECONDS));
        CompletableFuture<Boolean> waiting = inAnotherThread(second, Duration.ofSeconds(20));
        RealNode.await(
                () -> RealNode.http(rest, "GET", "/_locks/" + prefix + key, null)
                                .body()
                                .get("waiters")
                                .size()
                        == 1,
                Duration.ofSeconds(10),
                "the other registry queued");
        first.unlock();
        assertTrue(waiting.get(20, TimeUnit.SECONDS), "granted once the first registry let go");
        RealNode.await(() -> holders(key).isEmpty(), Duration.ofSeconds(10), "released by the waiter");
    }

    @Test
    void aThreadReentersItsLockAndOnlyTheLastUnlockReleasesIt() throws Exception {
        String key = "reentrant-" + UUID.randomUUID();
        Lock lock = one.obtain(key);
        lock.lock();
        assertTrue(lock.tryLock(), "the holding thread re-enters");
        lock.lockInterruptibly();
        assertFalse(inAnotherThread(lock, Duration.ofMillis(200)).get(10, TimeUnit.SECONDS), "another thread waits");
        lock.unlock();
        lock.unlock();
        assertEquals(1, holders(key).size(), "held until the last unlock");
        lock.unlock();
        assertTrue(holders(key).isEmpty());
        assertThrows(IllegalStateException.class, lock::unlock, "not held any more");
    }

    @Test
    void anUnlockByAThreadThatDoesNotHoldItIsRefused() throws Exception {
        String key = "foreign-" + UUID.randomUUID();
        Lock lock = one.obtain(key);
        lock.lock();
        try {
            ExecutionException refused =
                    assertThrows(ExecutionException.class, () -> CompletableFuture.runAsync(lock::unlock)
                            .get(10, TimeUnit.SECONDS));
            assertTrue(refused.getCause() instanceof IllegalStateException, refused.toString());
            assertEquals(1, holders(key).size(), "still held");
        } finally {
            lock.unlock();
        }
    }

    @Test
    void aLockWhoseTtlRanOutIsTakenByAnotherAndItsUnlockSaysSo() throws Exception {
        String key = "ttl-" + UUID.randomUUID();
        DistributedLock lock = one.obtain(key);
        lock.lock(Duration.ofSeconds(1));
        long token = holders(key).get(0).get("fencing_token").asLong();
        CompletableFuture<Boolean> other = inAnotherThread(two.obtain(key), Duration.ofSeconds(15));
        assertTrue(other.get(20, TimeUnit.SECONDS), "not renewed: the other registry got it after the ttl");
        assertThrows(ConcurrentModificationException.class, lock::unlock);
        assertTrue(lock.tryLock(), "free again, and the thread's hold was undone by the failed unlock");
        try {
            assertTrue(holders(key).get(0).get("fencing_token").asLong() > token, "a newer grant");
        } finally {
            lock.unlock();
        }
    }

    @Test
    void aHolderRenewsItsLockAndATryLockWithATtlTimesOut() throws Exception {
        String key = "renew-" + UUID.randomUUID();
        DistributedLock lock = one.obtain(key);
        assertTrue(lock.tryLock(Duration.ofSeconds(1), Duration.ofSeconds(2)));
        try {
            one.renewLock(key, Duration.ofSeconds(30));
            assertTrue(holders(key).get(0).get("lease_ms").asLong() > 20_000);
            CompletionException refused =
                    assertThrows(CompletionException.class, () -> CompletableFuture.runAsync(() -> one.renewLock(key))
                            .join());
            assertTrue(refused.getCause() instanceof IllegalStateException, "renewed only by the holding thread");
            assertFalse(two.obtain(key).tryLock(Duration.ofMillis(500), Duration.ofSeconds(5)));
        } finally {
            lock.unlock();
        }
    }

    @Test
    void unusedLocksAreForgottenAndHeldOnesKept() {
        LockManagerLockRegistry registry = new LockManagerLockRegistry(client, prefix);
        String keptKey = "kept-" + UUID.randomUUID();
        String unusedKey = "unused-" + UUID.randomUUID();
        Lock held = registry.obtain(keptKey);
        Lock unused = registry.obtain(unusedKey);
        unused.lock();
        unused.unlock();
        held.lock();
        try {
            registry.expireUnusedOlderThan(0);
            assertSame(held, registry.obtain(keptKey), "a held lock is kept");
            assertNotSame(unused, registry.obtain(unusedKey), "an unused lock was forgotten");
        } finally {
            held.unlock();
        }
    }
}
