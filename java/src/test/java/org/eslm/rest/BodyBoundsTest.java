package org.eslm.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.rest.RestStatus;
import org.eslm.NativeTestSupport;
import org.eslm.settings.LockSettings;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bodies are bounded before and while they are parsed (docs/API.md "Limits"). */
class BodyBoundsTest {
    private static final LockSettings.Values THREE_KEYS = LockSettings.Values.of(
            Settings.builder().put("locks.max_keys_per_request", 3).build());

    @BeforeAll
    static void setUp() {
        NativeTestSupport.setUp(); // Elasticsearch's exceptions need its logging configured
    }

    private static String locks(int n) {
        StringBuilder b = new StringBuilder("{\"owner\":\"w\",\"locks\":[");
        for (int i = 0; i < n; i++) {
            b.append(i == 0 ? "" : ",").append("{\"key\":\"k").append(i).append("\"}");
        }
        return b.append("]}").toString();
    }

    @Test
    void theEntryAfterMaxKeysPerRequestIsRefusedNamingLocks() throws IOException {
        LockBodies.Args three = LockBodies.multiAcquire(LockBodiesTest.parser(locks(3)), THREE_KEYS);
        assertEquals(3, ((List<?>) three.get("locks")).size());
        for (String body : List.of(locks(4), locks(100_000))) {
            Exception e = assertThrows(
                    IllegalArgumentException.class,
                    () -> LockBodies.multiAcquire(LockBodiesTest.parser(body), THREE_KEYS));
            assertTrue(e.getMessage().startsWith("[locks] names more than 3 keys"), LockBodiesTest.rootMessage(e));
            Exception r = assertThrows(
                    IllegalArgumentException.class,
                    () -> LockBodies.multiRelease(LockBodiesTest.parser(body), THREE_KEYS));
            assertTrue(r.getMessage().startsWith("[locks] names more than 3 keys"), LockBodiesTest.rootMessage(r));
        }
    }

    @Test
    void keysAndOwnersOver512Utf8BytesAreRefusedNamingTheField() throws IOException {
        String key512 = "é".repeat(256);
        String owner512 = "ö".repeat(255) + "xy";
        LockBodies.Args ok = LockBodies.multiAcquire(
                LockBodiesTest.parser("{\"owner\":\"" + owner512 + "\",\"locks\":[{\"key\":\"" + key512 + "\"}]}"),
                THREE_KEYS);
        assertEquals(owner512, ok.get("owner"));
        Exception key = assertThrows(
                IllegalArgumentException.class,
                () -> LockBodies.multiAcquire(
                        LockBodiesTest.parser("{\"owner\":\"w\",\"locks\":[{\"key\":\"" + key512 + "x\"}]}"),
                        THREE_KEYS));
        assertTrue(key.getMessage().startsWith("[key] must be at most 512 bytes"), LockBodiesTest.rootMessage(key));
        Exception owner = assertThrows(
                IllegalArgumentException.class,
                () -> LockBodies.acquire(
                        "k", LockBodiesTest.parser("{\"owner\":\"" + "ü".repeat(257) + "\"}"), THREE_KEYS));
        assertTrue(
                owner.getMessage().startsWith("[owner] must be at most 512 bytes"), LockBodiesTest.rootMessage(owner));
    }

    @Test
    void aBodyLongerThanTheLimitsAllowIs413BeforeParsing() {
        long max = THREE_KEYS.maxBodyBytes();
        assertEquals(16 * 1024 + 3 * 4 * 1024, max);
        LockRestHandler.checkBodyLength(max, THREE_KEYS);
        ElasticsearchStatusException e = assertThrows(
                ElasticsearchStatusException.class, () -> LockRestHandler.checkBodyLength(max + 1, THREE_KEYS));
        assertEquals(RestStatus.REQUEST_ENTITY_TOO_LARGE, e.status());
        assertTrue(e.getMessage().contains("locks.max_keys_per_request"), e.getMessage());
    }
}
