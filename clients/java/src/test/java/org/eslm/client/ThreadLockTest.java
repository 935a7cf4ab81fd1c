package org.eslm.client;

import static org.eslm.client.RealNode.holders;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The thread-owned {@code Lock} view against a real node: holds counted per thread as {@code
 * ReentrantLock}'s, the key taken on the server by the first hold and released by the last,
 * another thread's unlock refused, two processes' locks excluding each other, and an interrupt
 * that stops a waiting {@code lockInterruptibly()} and drops its waiter on the server.
 */
class ThreadLockTest extends NodeTest {
    private static int waiters(String key) {
        return RealNode.http(rest, "GET", "/_locks/" + key, null)
                .body()
                .get("waiters")
                .size();
    }

    @Test
    void holdsAreCountedPerThreadAndOnlyTheLastUnlockReleasesTheKey() throws Exception {
        String key = uniqueKey("thread-lock");
        ThreadLock lock = locks.newThreadLock(key, AcquireOptions.defaults());
        lock.lock();
        assertTrue(lock.tryLock());
        assertTrue(lock.tryLock(1, TimeUnit.SECONDS));
        assertEquals(3, lock.getHoldCount());
        long token = lock.grant().orElseThrow().fencingToken();
        assertEquals(token, holders(rest, key).get(0).get("fencing_token").asLong());
        CompletionException foreign =
                assertThrows(CompletionException.class, () -> CompletableFuture.runAsync(lock::unlock)
                        .join());
        assertTrue(foreign.getCause() instanceof IllegalMonitorStateException, foreign.toString());
        assertFalse(CompletableFuture.supplyAsync(lock::tryLock).join(), "another thread of this process waits");
        lock.unlock();
        lock.unlock();
        assertEquals(1, holders(rest, key).size(), "held until the last unlock");
        lock.unlock();
        assertEquals(0, holders(rest, key).size());
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
    }

    @Test
    void twoProcessesLocksExcludeEachOtherAndTheWaiterGetsItOnUnlock() throws Exception {
        String key = uniqueKey("thread-lock-two");
        ThreadLock mine = locks.newThreadLock(key, AcquireOptions.defaults());
        ThreadLock theirs = owner("other").newThreadLock(key, AcquireOptions.defaults());
        mine.lock();
        assertFalse(CompletableFuture.supplyAsync(theirs::tryLock).join());
        CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(() -> {
            theirs.lock();
            try {
                return theirs.grant().orElseThrow().fencingToken();
            } finally {
                theirs.unlock();
            }
        });
        RealNode.await(() -> waiters(key) == 1, Duration.ofSeconds(10), "the other process's lock() queued");
        long first = mine.grant().orElseThrow().fencingToken();
        mine.unlock();
        assertTrue(waiting.get(20, TimeUnit.SECONDS) > first);
    }

    @Test
    void anInterruptStopsAWaitingLockInterruptiblyAndDropsItsWaiter() throws Exception {
        String key = uniqueKey("thread-lock-interrupt");
        try (HeldLock holder = owner("holder").acquire(key)) {
            assertTrue(holder.fencingToken() > 0);
            ThreadLock lock = locks.newThreadLock(key, AcquireOptions.defaults());
            AtomicReference<Throwable> ended = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    lock.lockInterruptibly();
                } catch (Throwable e) {
                    ended.set(e);
                }
            });
            waiter.start();
            RealNode.await(() -> waiters(key) == 1, Duration.ofSeconds(10), "lockInterruptibly() queued");
            waiter.interrupt();
            waiter.join(10_000);
            assertTrue(ended.get() instanceof InterruptedException, String.valueOf(ended.get()));
            assertFalse(lock.isLocked(), "the local hold was undone");
            RealNode.await(() -> waiters(key) == 0, Duration.ofSeconds(10), "the server dropped the waiter");
        }
    }
}
