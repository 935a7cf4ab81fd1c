package org.eslm.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.UUID;
import org.elasticsearch.client.RestClient;
import org.eslm.client.LockClient;
import org.eslm.client.LockClientBuilder;
import org.eslm.client.RealNode;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A provider on the real node (RealNode: -Deslm.url) for one test class, and what the node says
 * about a name. Register it with {@code @RegisterExtension static final ShedLockNode NODE}.
 */
final class ShedLockNode implements BeforeAllCallback, AfterAllCallback {
    RestClient rest;
    LockClient client;
    LockManagerLockProvider provider;

    @Override
    public void beforeAll(ExtensionContext context) {
        rest = RealNode.restClient();
        client = LockClientBuilder.forRestClient(rest).owner("shedlock-it").build();
        // Each test class's names apart from earlier runs' on the same node.
        provider = new LockManagerLockProvider(client, "shedlock-it-" + UUID.randomUUID() + "-");
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (client != null) {
            client.close();
            rest.close();
        }
    }

    JsonNode holders(String lockName) {
        return RealNode.holders(rest, provider.keyOf(lockName));
    }

    void assertLocked(String lockName) {
        assertEquals(1, holders(lockName).size(), lockName + " is held");
    }

    void assertUnlocked(String lockName) {
        assertTrue(holders(lockName).isEmpty(), lockName + " is free: " + holders(lockName));
    }
}
