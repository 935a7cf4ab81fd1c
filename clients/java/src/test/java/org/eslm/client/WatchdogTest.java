package org.eslm.client;

import static org.eslm.client.RealNode.forceRelease;
import static org.eslm.client.RealNode.holders;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.LockNotHeldException;
import org.junit.jupiter.api.Test;

/** The lease watchdog: renewal while held, loss detected and signalled, and fencing. */
class WatchdogTest extends NodeTest {
    private static final Duration LEASE = Duration.ofSeconds(2);

    @Test
    void theWatchdogKeepsALockPastItsLease() {
        String key = uniqueKey("watchdog");
        try (HeldLock held = locks.acquire(key, AcquireOptions.defaults().withLease(LEASE))) {
            assertHeldThroughout(key, Duration.ofSeconds(5));
            JsonNode holder = holders(rest, key).get(0);
            assertEquals(held.fencingToken(), holder.get("fencing_token").asLong(), "the same grant throughout");
            assertTrue(holder.get("held_ms").asLong() >= 5_000, "held " + holder);
            assertTrue(holder.get("lease_ms").asLong() <= LEASE.toMillis(), "renewed with its own lease: " + holder);
            assertFalse(held.isLost());
        }
        assertEquals(0, holders(rest, key).size());
    }

    @Test
    void withoutTheWatchdogTheLeaseRunsOut() {
        String key = uniqueKey("no-watchdog");
        HeldLock held =
                locks.acquire(key, AcquireOptions.defaults().withLease(LEASE).withWatchdog(false));
        LockClient other = owner("other");
        RealNode.await(
                () -> other.tryAcquire(key)
                        .map(lock -> {
                            lock.close();
                            return true;
                        })
                        .orElse(false),
                Duration.ofSeconds(10),
                "the unrenewed lock expired");
        assertThrows(LockLostException.class, held::close);
    }

    @Test
    void aForceReleasedLockIsReportedLost() throws InterruptedException {
        String key = uniqueKey("lost");
        LostRecorder listener = new LostRecorder();
        HeldLock held =
                locks.acquire(key, AcquireOptions.defaults().withLease(LEASE)).onLost(listener);
        assertFalse(held.isLost());
        assertEquals(200, forceRelease(rest, key).status());

        LockException cause = listener.awaitCause(Duration.ofSeconds(5), "the listener was told within a lease");
        assertTrue(held.isLost());
        assertInstanceOf(LockNotHeldException.class, cause);
        assertEquals("lock_not_held_exception", cause.type());
        LockLostException thrown = assertThrows(LockLostException.class, held::close);
        assertInstanceOf(LockNotHeldException.class, thrown.getCause());
        assertEquals(1, listener.calls(), "told once");
        held.close(); // a second close does nothing
    }

    @Test
    void theStaleHoldersFencedWriteIsRefused() {
        String key = uniqueKey("fencing");
        String index = "fencing-" + UUID.randomUUID().toString().toLowerCase(Locale.ROOT);
        HeldLock stale = locks.acquire(key, AcquireOptions.defaults().withLease(Duration.ofSeconds(30)));
        assertEquals(201, write(index, stale.fencingToken(), "stale-1"));
        assertEquals(200, forceRelease(rest, key).status()); // the holder paused past its lock
        try (HeldLock fresh = owner("fresh").acquire(key)) {
            assertTrue(fresh.fencingToken() > stale.fencingToken());
            assertEquals(200, write(index, fresh.fencingToken(), "fresh"));
            RealNode.Answer refused = writeAnswer(index, stale.fencingToken(), "stale-2");
            assertEquals(409, refused.status(), refused.toString());
            assertEquals(
                    "version_conflict_engine_exception",
                    refused.body().at("/error/type").asText());
            JsonNode stored =
                    RealNode.http(rest, "GET", "/" + index + "/_doc/1", null).body();
            assertEquals("fresh", stored.at("/_source/by").asText(), stored.toString());
            assertEquals(fresh.fencingToken(), stored.get("_version").asLong());
        } finally {
            assertThrows(LockLostException.class, stale::close);
            RealNode.http(rest, "DELETE", "/" + index, null);
        }
    }

    private static int write(String index, long token, String by) {
        return writeAnswer(index, token, by).status();
    }

    /** docs/API.md, "The fencing recipe": the token as an external version (external_gte). */
    private static RealNode.Answer writeAnswer(String index, long token, String by) {
        return RealNode.http(
                rest,
                "PUT",
                "/" + index + "/_doc/1?version=" + token + "&version_type=external_gte",
                "{\"by\":\"" + by + "\"}");
    }
}
