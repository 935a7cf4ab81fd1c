package org.eslm.client;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.UUID;
import org.elasticsearch.client.RestClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A test class against the real node: one REST client and one lock client per class. */
abstract class NodeTest {
    static RestClient rest;
    static LockClient locks;

    @BeforeAll
    static void connect() {
        rest = RealNode.restClient();
        locks = LockClient.builder(rest).owner("java-it-" + UUID.randomUUID()).build();
    }

    @AfterAll
    static void disconnect() throws IOException {
        if (locks != null) {
            locks.close();
        }
        if (rest != null) {
            rest.close();
        }
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
