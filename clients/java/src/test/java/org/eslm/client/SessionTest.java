package org.eslm.client;

import static org.eslm.client.RealNode.holders;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.SessionNotFoundException;
import org.eslm.client.internal.Endpoints;
import org.junit.jupiter.api.Test;

/** Sessions: kept alive in the background; their locks go with them. */
class SessionTest extends NodeTest {
    private static final Duration TTL = Duration.ofSeconds(2);

    @Test
    void aKeptAliveSessionHoldsItsLocksPastItsTtlAndFreesThemWhenClosed() {
        String one = uniqueKey("session-a");
        String two = uniqueKey("session-b");
        try (LockSession session = locks.openSession(TTL)) {
            HeldLock first = session.acquire(one);
            HeldLock second = session.acquire(two, AcquireOptions.defaults().shared());
            assertEquals(session, first.session().orElseThrow());
            assertEquals(LockMode.SHARED, second.mode());
            assertHeldThroughout(one, Duration.ofSeconds(4)); // twice the ttl: kept alive
            assertFalse(session.isLost());
            assertFalse(first.isLost());
        }
        assertEquals(0, holders(rest, one).size(), "ending the session released its locks");
        assertEquals(0, holders(rest, two).size());
    }

    @Test
    void aSessionEndedFromOutsideIsLostWithItsLocks() throws InterruptedException {
        String key = uniqueKey("session-lost");
        LockSession session = locks.openSession(TTL);
        LostRecorder listener = new LostRecorder();
        HeldLock held = session.acquire(key).onLost(listener);
        RealNode.Answer ended =
                RealNode.http(rest, "DELETE", Endpoints.session(session.id()), "{\"owner\":\"" + locks.owner() + "\"}");
        assertEquals(200, ended.status(), ended.toString());

        LockException cause = listener.awaitCause(Duration.ofSeconds(5), "the keep-alive found the session gone");
        assertInstanceOf(SessionNotFoundException.class, cause);
        assertTrue(session.isLost());
        assertTrue(held.isLost());
        assertThrows(LockLostException.class, session::close);
    }
}
