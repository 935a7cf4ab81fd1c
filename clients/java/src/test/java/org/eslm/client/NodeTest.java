package org.eslm.client;

import java.io.IOException;
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

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
