package org.eslm.client;

import static org.eslm.client.LockClientTest.waiters;
import static org.eslm.client.RealNode.holders;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** acquireAsync: queued on the server, completed when granted, cancellable. */
class AsyncTest extends NodeTest {
    private static final AcquireOptions WAIT = AcquireOptions.defaults().withWait(Duration.ofSeconds(30));

    @Test
    void aQueuedAsyncAcquireCompletesWhenTheHolderReleases() throws Exception {
        String key = uniqueKey("async");
        HeldLock first = owner("first").acquire(key);
        CompletableFuture<HeldLock> queued = owner("second").acquireAsync(key, WAIT);
        RealNode.await(() -> waiters(key) == 1, Duration.ofSeconds(5), "the async acquire queued on the server");
        assertFalse(queued.isDone());
        first.close();
        try (HeldLock second = queued.get(10, TimeUnit.SECONDS)) {
            assertTrue(second.fencingToken() > first.fencingToken());
            assertTrue(second.waitedMs() > 0);
        }
    }

    @Test
    void cancellingAQueuedAcquireDropsTheWaiter() {
        String key = uniqueKey("async-cancel");
        try (HeldLock first = owner("first").acquire(key)) {
            CompletableFuture<HeldLock> queued = owner("second").acquireAsync(key, WAIT);
            RealNode.await(() -> waiters(key) == 1, Duration.ofSeconds(5), "queued");
            assertTrue(queued.cancel(true));
            RealNode.await(() -> waiters(key) == 0, Duration.ofSeconds(5), "the server dropped the waiter");
            assertEquals(first.owner(), holders(rest, key).get(0).get("owner").asText());
        }
        assertEquals(0, holders(rest, key).size(), "nobody got the lock after the cancelled waiter");
    }
}
