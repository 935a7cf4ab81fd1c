package org.eslm.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.UUID;
import org.elasticsearch.client.RestClient;
import org.eslm.client.LockClient;
import org.eslm.client.RealNode;

/** A provider on the real node (RealNode: -Deslm.url), and what the node says about a name. */
final class ShedLockNode implements AutoCloseable {
    final RestClient rest = RealNode.restClient();
    final LockClient client = LockClient.builder(rest).owner("shedlock-it").build();
    /** Each test class's names apart from earlier runs' on the same node. */
    final LockManagerLockProvider provider =
            new LockManagerLockProvider(client, "shedlock-it-" + UUID.randomUUID() + "-");

    JsonNode holders(String lockName) {
        return RealNode.holders(rest, provider.keyOf(lockName));
    }

    void assertLocked(String lockName) {
        assertEquals(1, holders(lockName).size(), lockName + " is held");
    }

    void assertUnlocked(String lockName) {
        assertTrue(holders(lockName).isEmpty(), lockName + " is free: " + holders(lockName));
    }

    @Override
    public void close() throws IOException {
        client.close();
        rest.close();
    }
}
