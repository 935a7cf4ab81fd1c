package org.eslm.client;

import static org.eslm.client.RealNode.forceRelease;
import static org.eslm.client.RealNode.holders;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.eslm.client.internal.Endpoints;
import org.junit.jupiter.api.Test;

/**
 * {@link LockClient#close()} lets go of what the client holds (issue 49 item 5), as the Python
 * client's close does: right after it, every lock its watchdog renewed, every semaphore grant and
 * leadership, and every session's locks are free, as plain HTTP shows; a lock already gone is no
 * failure; a lock without a watchdog (the caller's own bound, ShedLock's lockAtMostFor) is left to
 * its lease; and a grant that arrives after the close is given back at once.
 */
class CloseTest extends NodeTest {
    private static int semaphoreHolders(String name) {
        return RealNode.http(rest, "GET", Endpoints.semaphore(name), null)
                .body()
                .get("holders")
                .size();
    }

    private static String leader(String election) {
        return RealNode.http(rest, "GET", Endpoints.election(election), null)
                .body()
                .path("leader")
                .asText("");
    }

    @Test
    void closeReleasesEveryHeldLockAndEndsEverySession() {
        String key = uniqueKey("close");
        String nested = uniqueKey("close-nested");
        String lost = uniqueKey("close-lost");
        String semaphore = uniqueKey("close-sem");
        String election = uniqueKey("close-elect");
        String underSession = uniqueKey("close-session");
        String bounded = uniqueKey("close-bounded");
        LockClient client = builder().build();
        AcquireOptions lease = AcquireOptions.defaults().withLease(Duration.ofSeconds(60));
        HeldLock held = client.acquire(key, lease);
        LockClient reentrant = client.reentrant();
        HeldLock outer = reentrant.acquire(nested, lease);
        HeldLock inner = reentrant.acquire(nested, lease);
        assertTrue(inner.isReentrant());
        HeldLock gone = client.acquire(lost, lease);
        HeldLock permit = client.semaphore(semaphore, 2).acquire(lease);
        Leadership lead = client.election(election).campaign("v", lease);
        LockSession session = client.openSession(Duration.ofSeconds(60));
        session.acquire(underSession);
        HeldLock leftToItsLease = client.acquire(bounded, lease.withWatchdog(false));
        assertEquals(200, forceRelease(rest, lost).status());
        for (String each : new String[] {key, nested, underSession, bounded}) {
            assertEquals(1, holders(rest, each).size(), each);
        }
        assertEquals(1, semaphoreHolders(semaphore));
        assertEquals(lead.candidate(), leader(election));

        client.close(); // no exception for the force-released lock

        for (String each : new String[] {key, nested, lost, underSession}) {
            assertEquals(0, holders(rest, each).size(), each + " is free right after close()");
        }
        assertEquals(0, semaphoreHolders(semaphore), "the permit came back");
        assertEquals("", leader(election), "the leadership was resigned");
        assertEquals(
                leftToItsLease.fencingToken(),
                holders(rest, bounded).get(0).get("fencing_token").asLong(),
                "a lock without a watchdog is left to its lease");
        assertTrue(client.isClosed());
        held.close(); // closing a handle after its client: nothing more to do, nothing thrown
        outer.close();
        assertTrue(client.heldLocks() <= 1, "only the lock without a watchdog is still open");
    }

    @Test
    void aGrantAfterCloseIsGivenBackAndItsAcquireFails() {
        String key = uniqueKey("close-after");
        LockClient client = builder().build();
        LockClient view = client.withOwner("close-view-" + key);
        client.close();
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> view.acquire(key));
        assertTrue(refused.getMessage().contains("closed"), refused.getMessage());
        RealNode.await(() -> holders(rest, key).isEmpty(), Duration.ofSeconds(10), "the late grant given back");
        assertFalse(owner("next").tryAcquire(key).isEmpty(), "the key is free for the next owner");
    }
}
