package org.eslm.client;

import static org.eslm.client.RealNode.forceRelease;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.http.HttpHost;
import org.elasticsearch.client.RestClient;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.LockNotHeldException;
import org.eslm.client.errors.LockTransportException;
import org.eslm.client.errors.LockWaitTimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The client's listener hook ({@link LockClientListener}) and its read-only state ({@code
 * isClosed}, {@code heldLocks}, {@code lostLocks}, {@code partitionHealth}), against the real node.
 */
class ListenerTest extends NodeTest {
    /** What a listener was told, in order. */
    static final class Recorder implements LockClientListener {
        record Event(String kind, String key, Duration time, LockException cause) {}

        final List<Event> events = new CopyOnWriteArrayList<>();

        @Override
        public void onAcquired(HeldLock lock, Duration took) {
            events.add(new Event("acquired", lock.key(), took, null));
        }

        @Override
        public void onAcquireFailed(String key, LockScope scope, Duration took, LockException cause) {
            events.add(new Event("failed", key, took, cause));
        }

        @Override
        public void onRenewed(HeldLock lock) {
            events.add(new Event("renewed", lock.key(), null, null));
        }

        @Override
        public void onRenewalFailed(HeldLock lock, LockException cause) {
            events.add(new Event("renewal_failed", lock.key(), null, cause));
        }

        @Override
        public void onLost(HeldLock lock, LockException cause) {
            events.add(new Event("lost", lock.key(), null, cause));
        }

        @Override
        public void onReleased(HeldLock lock, Duration held) {
            events.add(new Event("released", lock.key(), held, null));
        }

        List<Event> of(String kind) {
            return events.stream().filter(e -> e.kind().equals(kind)).toList();
        }
    }

    @Test
    void aGrantAndItsReleaseAreReportedAndCounted() {
        Recorder recorder = new Recorder();
        String key = uniqueKey("listener-grant");
        try (LockClient client = builder().listener(recorder).build()) {
            assertEquals(0, client.heldLocks());
            HeldLock held = client.acquire(key, AcquireOptions.defaults().withLease(Duration.ofSeconds(30)));
            assertEquals(1, client.heldLocks());
            try (HeldLock nested = client.withOwner(held.owner()).acquire(key)) {
                assertTrue(nested.isReentrant());
                assertEquals(1, client.heldLocks(), "two handles of one grant count once");
            }
            pause(50);
            held.close();
            assertEquals(0, client.heldLocks());
            assertEquals(0, client.lostLocks());
            List<Recorder.Event> acquired = recorder.of("acquired");
            assertEquals(2, acquired.size(), recorder.events.toString());
            assertEquals(key, acquired.get(0).key());
            assertTrue(acquired.get(0).time().toNanos() > 0);
            List<Recorder.Event> released = recorder.of("released");
            assertEquals(1, released.size(), "the last handle's release only: " + recorder.events);
            assertTrue(
                    released.get(0).time().toMillis() >= 50,
                    "held " + released.get(0).time());
            assertEquals(List.of(), recorder.of("failed"));
        }
    }

    @Test
    void aBusyTryAndARunOutWaitAreReportedAndAQueuedGrantWaited() throws Exception {
        Recorder recorder = new Recorder();
        String key = uniqueKey("listener-busy");
        HeldLock other = owner("holder").acquire(key);
        try (LockClient client = builder().listener(recorder).build()) {
            assertTrue(client.tryAcquire(key).isEmpty());
            assertThrows(
                    LockWaitTimeoutException.class,
                    () -> client.acquire(key, AcquireOptions.defaults().withWait(Duration.ofMillis(200))));
            List<Recorder.Event> failed = recorder.of("failed");
            assertEquals(2, failed.size(), recorder.events.toString());
            assertInstanceOf(LockConflictException.class, failed.get(0).cause());
            assertInstanceOf(LockWaitTimeoutException.class, failed.get(1).cause());
            assertTrue(
                    failed.get(1).time().toMillis() >= 150,
                    "waited " + failed.get(1).time());

            CompletableFuture<HeldLock> waiting =
                    client.acquireAsync(key, AcquireOptions.defaults().withWait(Duration.ofSeconds(10)));
            pause(300);
            other.close();
            try (HeldLock granted = waiting.get()) {
                assertTrue(granted.waitedMs() > 0, "queued on the server: " + granted.waitedMs());
                Recorder.Event acquired = recorder.of("acquired").get(0);
                assertTrue(acquired.time().toMillis() >= granted.waitedMs(), acquired.toString());
            }
        }
    }

    @Test
    void watchdogRenewalsAreReported() {
        Recorder recorder = new Recorder();
        String key = uniqueKey("listener-renew");
        try (LockClient client = builder().listener(recorder).build();
                HeldLock held = client.acquire(key, AcquireOptions.defaults().withLease(Duration.ofSeconds(1)))) {
            RealNode.await(() -> recorder.of("renewed").size() >= 2, Duration.ofSeconds(10), "two renewals");
            held.renew(Duration.ofSeconds(1));
            assertTrue(recorder.of("renewed").size() >= 3);
            assertEquals(List.of(), recorder.of("renewal_failed"));
            assertFalse(held.isLost());
        }
    }

    @Test
    void aLossIsReportedOnceAndCounted() {
        Recorder recorder = new Recorder();
        String key = uniqueKey("listener-lost");
        try (LockClient client = builder().listener(recorder).build()) {
            HeldLock held = client.acquire(key, AcquireOptions.defaults().withLease(Duration.ofSeconds(60)));
            assertEquals(200, forceRelease(rest, key).status());
            RealNode.await(() -> client.lostLocks() == 1, Duration.ofSeconds(10), "the loss counted");
            assertThrows(LockLostException.class, held::close);
            List<Recorder.Event> lost = recorder.of("lost");
            assertEquals(1, lost.size(), recorder.events.toString());
            assertInstanceOf(LockNotHeldException.class, lost.get(0).cause());
            assertEquals(List.of(), recorder.of("released"), "a lost lock is not released");
            assertEquals(1, client.lostLocks());
            assertEquals(0, client.heldLocks());
        }
    }

    @Test
    void aListenerThatThrowsChangesNothing() {
        Recorder after = new Recorder();
        LockClientListener failing = new LockClientListener() {
            @Override
            public void onAcquired(HeldLock lock, Duration took) {
                throw new IllegalStateException("listener failure (expected by the test)");
            }

            @Override
            public void onReleased(HeldLock lock, Duration held) {
                throw new IllegalStateException("listener failure (expected by the test)");
            }
        };
        String key = uniqueKey("listener-throws");
        try (LockClient client = builder().listener(failing).listener(after).build()) {
            client.acquire(key).close();
            assertEquals(1, after.of("acquired").size());
            assertEquals(1, after.of("released").size());
            assertFalse(client.isLocked(key));
        }
    }

    @Test
    void theClientsStateAndTheClustersPartitionHealth() throws IOException {
        LockClient client = builder().build();
        LockClient view = client.reentrant();
        assertFalse(client.isClosed());
        RealNode.await(
                () -> client.partitionHealth().isGreen(),
                Duration.ofSeconds(30),
                "lock_partitions green on the test node");
        PartitionHealth health = client.partitionHealth();
        assertEquals("green", health.status());
        assertFalse(health.symptom().isEmpty());
        assertTrue(((Number) health.details().get("partitions")).intValue() >= 1, health.toString());
        view.close(); // a view's close does nothing
        assertFalse(client.isClosed());
        client.close();
        assertTrue(client.isClosed());
        assertTrue(view.isClosed());

        try (RestClient refused = RestClient.builder(HttpHost.create("http://127.0.0.1:9"))
                        .build();
                LockClient nowhere = LockClientBuilder.forRestClient(refused).build()) {
            assertThrows(LockTransportException.class, nowhere::partitionHealth);
        }
    }
}
