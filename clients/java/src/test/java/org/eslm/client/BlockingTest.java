package org.eslm.client;

import static org.eslm.client.RealNode.holders;
import static org.eslm.client.RealNode.http;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockWaitTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Waiting as every lock library waits, against a real node whose {@code locks.wait.max} is lowered
 * to 2 s: an acquire blocks until granted by default, past the server's maximum (sent again in
 * rounds); a bounded wait longer than the maximum is kept and runs out; {@code tryOnce()} does not
 * wait; cancelling a waiting acquire drops its waiter on the server.
 */
class BlockingTest extends NodeTest {
    private static final long WAIT_MAX_MS = 2_000;

    @BeforeEach
    void lowerTheServersWaitMax() {
        assertEquals(
                200,
                http(rest, "PUT", "/_cluster/settings", "{\"persistent\":{\"locks.wait.max\":\"2s\"}}")
                        .status());
    }

    @AfterEach
    void restoreTheServersWaitMax() {
        http(rest, "PUT", "/_cluster/settings", "{\"persistent\":{\"locks.wait.max\":null}}");
    }

    private static int waiters(String key) {
        return http(rest, "GET", "/_locks/" + key, null).body().get("waiters").size();
    }

    @Test
    void aBlockedAcquireIsGrantedWhenTheHolderLeavesAfterLongerThanTheServersWaitMax() throws Exception {
        String key = uniqueKey("blocking");
        HeldLock held = owner("holder").acquire(key, AcquireOptions.defaults().withLease(Duration.ofSeconds(30)));
        long started = System.nanoTime();
        CompletableFuture<HeldLock> waiting = owner("waiter").acquireAsync(key, AcquireOptions.defaults());
        RealNode.await(() -> waiters(key) == 1, Duration.ofSeconds(10), "the acquire queued");
        // The hold lasts across two of the server's waits and then some: the client must re-send.
        Thread.sleep(Math.max(0, 5 * WAIT_MAX_MS / 2 - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)));
        assertFalse(waiting.isDone(), "the acquire ended instead of waiting on: " + waiting);
        assertEquals(1, waiters(key));
        held.close();
        try (HeldLock granted = waiting.get(15, TimeUnit.SECONDS)) {
            assertTrue(granted.fencingToken() > held.fencingToken());
            assertEquals(granted.owner(), holders(rest, key).get(0).get("owner").asText());
        }
    }

    @Test
    void aWaitLongerThanTheServersMaxIsKeptAndRunsOutAndTryOnceDoesNotWait() {
        String key = uniqueKey("bounded");
        try (HeldLock held = owner("holder").acquire(key)) {
            assertTrue(held.fencingToken() > 0);
            LockClient other = owner("other");
            long started = System.nanoTime();
            Duration wait = Duration.ofMillis(2 * WAIT_MAX_MS + 1_000);
            assertThrows(
                    LockWaitTimeoutException.class,
                    () -> other.acquire(key, AcquireOptions.defaults().withWait(wait)));
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(took >= wait.toMillis(), "gave up after " + took + " ms");
            assertThrows(
                    LockConflictException.class,
                    () -> other.acquire(key, AcquireOptions.defaults().tryOnce()));
            assertTrue(other.tryAcquire(key).isEmpty());
        }
    }

    @Test
    void cancellingAWaitingAcquireDropsItsWaiter() throws Exception {
        String key = uniqueKey("cancel");
        try (HeldLock held = owner("holder").acquire(key)) {
            assertTrue(held.fencingToken() > 0);
            CompletableFuture<HeldLock> waiting = owner("waiter").acquireAsync(key, AcquireOptions.defaults());
            RealNode.await(() -> waiters(key) == 1, Duration.ofSeconds(10), "the acquire queued");
            assertTrue(waiting.cancel(true));
            assertThrows(CancellationException.class, waiting::join);
            RealNode.await(() -> waiters(key) == 0, Duration.ofSeconds(10), "the server dropped the waiter");
        }
        assertEquals(0, holders(rest, key).size(), "nothing was granted to the cancelled acquire");
    }
}
