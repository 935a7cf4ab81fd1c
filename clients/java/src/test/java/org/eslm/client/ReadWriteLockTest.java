package org.eslm.client;

import static org.eslm.client.RealNode.forceRelease;
import static org.eslm.client.RealNode.holders;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eslm.client.errors.LockLostException;
import org.junit.jupiter.api.Test;

/**
 * Read-write locks against a real node (issue 49 item 5): {@link ThreadReadWriteLock}'s readers
 * share the key and its writer excludes readers and writers, across threads and processes; {@link
 * HeldLock#downgrade()} lets a reader queued before it in while a writer queued behind it waits,
 * keeping the token and the lease; the write-then-read idiom of {@code ReentrantReadWriteLock}
 * downgrades on the server.
 */
class ReadWriteLockTest extends NodeTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static JsonNode waiters(String key) {
        return RealNode.http(rest, "GET", "/_locks/" + key, null).body().get("waiters");
    }

    /** {@code (owner, mode, token)} of each holder of {@code key}. */
    private static List<String> holding(String key) {
        List<String> found = new ArrayList<>();
        holders(rest, key)
                .forEach(h -> found.add(h.get("owner").asText() + " "
                        + h.get("mode").asText() + " " + h.get("fencing_token").asLong()));
        return found;
    }

    @Test
    void readersShareTheKeyAndAWriterExcludesReadersAndWriters() throws Exception {
        String key = uniqueKey("rw");
        try (LockClient perAcquisition = builder().build()) { // an owner per grant: one per reading thread
            readersShareAndWritersExclude(key, perAcquisition.readWriteLock(key));
        }
    }

    private void readersShareAndWritersExclude(String key, ThreadReadWriteLock mine) throws Exception {
        ThreadReadWriteLock theirs = owner("other").readWriteLock(key);
        CountDownLatch bothInside = new CountDownLatch(2);
        CountDownLatch leave = new CountDownLatch(1);
        List<CompletableFuture<Long>> readers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            readers.add(CompletableFuture.supplyAsync(() -> {
                mine.readLock().lock();
                try {
                    bothInside.countDown();
                    await(leave);
                    return mine.grant().orElseThrow().fencingToken();
                } finally {
                    mine.readLock().unlock();
                }
            }));
        }
        assertTrue(bothInside.await(WAIT.toSeconds(), TimeUnit.SECONDS), "two threads read at once");
        assertEquals(2, holders(rest, key).size());
        holders(rest, key).forEach(h -> assertEquals("shared", h.get("mode").asText()));
        assertTrue(theirs.readLock().tryLock(), "another process reads beside them");
        theirs.readLock().unlock();
        assertFalse(theirs.writeLock().tryLock(), "a writer beside readers");
        leave.countDown();
        assertTrue(readers.get(0).get(20, TimeUnit.SECONDS) != readers.get(1).get(20, TimeUnit.SECONDS));
        assertEquals(0, holders(rest, key).size());

        mine.writeLock().lock();
        try {
            assertEquals(LockMode.EXCLUSIVE, mine.grant().orElseThrow().mode());
            assertFalse(theirs.readLock().tryLock(), "a reader beside the writer");
            assertFalse(theirs.writeLock().tryLock(200, TimeUnit.MILLISECONDS), "two writers");
            assertFalse(
                    CompletableFuture.supplyAsync(() -> mine.readLock().tryLock())
                            .get(20, TimeUnit.SECONDS),
                    "another thread of this process reads while it writes");
        } finally {
            mine.writeLock().unlock();
        }
        assertEquals(0, holders(rest, key).size());
        mine.readLock().lock();
        try {
            assertThrows(IllegalStateException.class, () -> mine.writeLock().lock(), "an upgrade waits for itself");
        } finally {
            mine.readLock().unlock();
        }
        assertThrows(IllegalMonitorStateException.class, () -> mine.readLock().unlock());
    }

    @Test
    void aDowngradeLetsAQueuedReaderInWhileAQueuedWriterWaits() throws Exception {
        String key = uniqueKey("rw-downgrade");
        AcquireOptions lease = AcquireOptions.defaults().withLease(Duration.ofSeconds(60));
        HeldLock writer = locks.acquire(key, lease);
        long token = writer.fencingToken();
        CompletableFuture<HeldLock> reader = owner("reader").acquireAsync(key, lease.shared());
        RealNode.await(() -> waiters(key).size() == 1, WAIT, "the reader queued");
        CompletableFuture<HeldLock> nextWriter = owner("writer").acquireAsync(key, lease);
        RealNode.await(() -> waiters(key).size() == 2, WAIT, "the writer queued behind it");
        long leaseBefore = holders(rest, key).get(0).get("lease_ms").asLong();

        writer.downgrade();

        HeldLock read = reader.get(20, TimeUnit.SECONDS);
        assertEquals(LockMode.SHARED, writer.mode());
        assertEquals(token, writer.fencingToken());
        assertTrue(
                holding(key).contains(writer.owner() + " shared " + token),
                holding(key).toString());
        assertTrue(
                holding(key).contains(read.owner() + " shared " + read.fencingToken()),
                holding(key).toString());
        assertEquals(1, waiters(key).size());
        assertEquals("exclusive", waiters(key).get(0).get("mode").asText());
        assertFalse(nextWriter.isDone(), "the writer got in beside the readers");
        JsonNode mine = holders(rest, key).get(0).get("fencing_token").asLong() == token
                ? holders(rest, key).get(0)
                : holders(rest, key).get(1);
        assertTrue(mine.get("lease_ms").asLong() <= leaseBefore, "the downgrade started a new lease");
        assertThrows(IllegalStateException.class, writer::downgrade, "already shared");
        read.close();
        writer.close();
        try (HeldLock next = nextWriter.get(20, TimeUnit.SECONDS)) {
            assertTrue(next.fencingToken() > read.fencingToken());
        }
    }

    @Test
    void unlockingTheWriteLockWhileReadingDowngradesOnTheServer() throws Exception {
        String key = uniqueKey("rw-idiom");
        ThreadReadWriteLock rw = locks.readWriteLock(key);
        rw.writeLock().lock();
        rw.readLock().lock(); // reads under its exclusive grant
        long token = rw.grant().orElseThrow().fencingToken();
        assertEquals(1, holders(rest, key).size());
        CompletableFuture<HeldLock> reader =
                owner("reader").acquireAsync(key, AcquireOptions.defaults().shared());
        RealNode.await(() -> waiters(key).size() == 1, WAIT, "the reader queued");
        CompletableFuture<HeldLock> writer = owner("writer").acquireAsync(key, AcquireOptions.defaults());
        RealNode.await(() -> waiters(key).size() == 2, WAIT, "the writer queued");

        rw.writeLock().unlock(); // the idiom: write, then read on

        HeldLock read = reader.get(20, TimeUnit.SECONDS);
        assertEquals(token, rw.grant().orElseThrow().fencingToken());
        assertEquals(LockMode.SHARED, rw.grant().orElseThrow().mode());
        assertFalse(writer.isDone());
        read.close();
        assertFalse(writer.isDone(), "still a reader: this thread's");
        rw.readLock().unlock();
        writer.get(20, TimeUnit.SECONDS).close();
        assertEquals(0, holders(rest, key).size());
    }

    @Test
    void aDowngradeOfALostLockThrowsAndMarksItLost() {
        String key = uniqueKey("rw-lost");
        HeldLock held = locks.acquire(key, AcquireOptions.defaults().withWatchdog(false));
        assertEquals(200, forceRelease(rest, key).status());
        assertThrows(LockLostException.class, held::downgrade);
        assertTrue(held.isLost());
        assertThrows(LockLostException.class, held::close);
        try (HeldLock shared = locks.acquire(key, AcquireOptions.defaults().shared())) {
            assertThrows(IllegalStateException.class, shared::downgrade, "a shared lock");
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
