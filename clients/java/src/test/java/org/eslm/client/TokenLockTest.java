package org.eslm.client;

import static org.eslm.client.LockClientTest.waiters;
import static org.eslm.client.RealNode.holders;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The java.util.concurrent.locks.Lock adapter: owned by its grant, not by a thread. */
class TokenLockTest extends NodeTest {
    private final ExecutorService threads = Executors.newFixedThreadPool(2);
    private String key;
    private TokenLock holder;
    private TokenLock waiter;

    @BeforeEach
    void twoLocksOfOneKey() {
        key = uniqueKey("adapter");
        holder = locks.newLock(key, AcquireOptions.defaults());
        waiter = locks.newLock(key, AcquireOptions.defaults());
    }

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    @Test
    void aLockTakenOnOneThreadIsUnlockedOnAnother() throws Exception {
        TokenLock lock = holder;
        threads.submit(lock::lock).get(10, TimeUnit.SECONDS);
        long token = lock.holding().orElseThrow().fencingToken();
        assertEquals(token, holders(rest, key).get(0).get("fencing_token").asLong());
        assertFalse(lock.tryLock(), "not reentrant: a second acquisition of the same Lock is excluded");
        TokenLock elsewhere = owner("elsewhere").newLock(key, AcquireOptions.defaults());
        assertFalse(elsewhere.tryLock());

        threads.submit(lock::unlock).get(10, TimeUnit.SECONDS); // another thread than the one that locked

        assertTrue(lock.holding().isEmpty());
        assertTrue(elsewhere.tryLock());
        elsewhere.unlock();
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
        assertThrows(UnsupportedOperationException.class, lock::newCondition);
    }

    @Test
    void lockWaitsForTheHolderAndTryLockGivesUpInTime() throws Exception {
        holder.lock();
        long start = System.nanoTime();
        assertFalse(waiter.tryLock(300, TimeUnit.MILLISECONDS));
        assertTrue(Duration.ofNanos(System.nanoTime() - start).toMillis() >= 300);

        CompletableFuture<Void> locked = CompletableFuture.runAsync(waiter::lock, threads);
        RealNode.await(() -> waiters(key) == 1, Duration.ofSeconds(5), "lock() queued on the server");
        assertFalse(locked.isDone());
        holder.unlock();
        locked.get(10, TimeUnit.SECONDS);
        assertTrue(waiter.holding().isPresent());
        waiter.unlock();
        assertEquals(0, holders(rest, key).size());
    }

    @Test
    void lockInterruptiblyGivesUpOnInterruptAndLeavesNoWaiter() throws Exception {
        holder.lock();
        var attempt = threads.submit(() -> {
            waiter.lockInterruptibly();
            return null;
        });
        RealNode.await(() -> waiters(key) == 1, Duration.ofSeconds(5), "queued");
        attempt.cancel(true); // interrupts the waiting thread
        RealNode.await(() -> waiters(key) == 0, Duration.ofSeconds(5), "the interrupted waiter was dropped");
        holder.unlock();
        assertTrue(waiter.holding().isEmpty());
    }
}
