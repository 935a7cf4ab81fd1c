package org.eslm.client;

import static org.junit.jupiter.api.Assertions.assertTrue;

import co.elastic.clients.transport.rest5_client.low_level.Rest5Client;
import java.io.IOException;
import java.time.Duration;
import java.util.UUID;
import org.elasticsearch.client.RestClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInfo;

/**
 * A test class against the real node: one lock client per class, over the legacy {@link
 * RestClient}, or over {@link Rest5Client} when the class is {@link OverRest5} (a subclass that
 * runs the same tests again over the other transport). {@link #rest} is always the legacy client,
 * for {@link RealNode}'s checks outside the client under test.
 */
abstract class NodeTest {
    /** Marks a test class whose lock clients run over {@link Rest5Client}. */
    interface OverRest5 {}

    static RestClient rest;
    static Rest5Client rest5;
    static LockClient locks;

    @BeforeAll
    static void connect(TestInfo test) {
        rest = RealNode.restClient();
        if (OverRest5.class.isAssignableFrom(test.getTestClass().orElseThrow())) {
            rest5 = RealNode.rest5Client();
        }
        locks = builder().owner("java-it-" + UUID.randomUUID()).build();
    }

    @AfterAll
    static void disconnect() throws IOException {
        if (locks != null) {
            locks.close();
        }
        if (rest5 != null) {
            rest5.close();
            rest5 = null;
        }
        if (rest != null) {
            rest.close();
        }
    }

    /** A builder over this class's transport. */
    static LockClientBuilder builder() {
        return rest5 != null ? LockClientBuilder.forRest5Client(rest5) : LockClientBuilder.forRestClient(rest);
    }

    /** Another owner, as a second process would be: same connection, its own locks. */
    static LockClient owner(String name) {
        return locks.withOwner(name + "-" + UUID.randomUUID());
    }

    /**
     * Asserts that {@code other} cannot take {@code key} at any of its tries over {@code time}:
     * the lock stays held, e.g. past its lease while renewed.
     */
    static void assertHeldThroughout(String key, Duration time) {
        LockClient other = owner("other");
        long end = System.nanoTime() + time.toNanos();
        int tries = 0;
        while (System.nanoTime() < end) {
            assertTrue(other.tryAcquire(key).isEmpty(), "taken by another owner after " + tries + " tries");
            tries++;
            pause(200);
        }
    }

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
