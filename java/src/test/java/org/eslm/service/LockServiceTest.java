package org.eslm.service;

import org.elasticsearch.rest.RestStatus;
import org.eslm.bridge.NativeLockCore;
import org.eslm.NativeTestSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The service's translation of native outcomes into Elasticsearch exceptions, on the real core. */
class LockServiceTest {
    @BeforeAll
    static void loadLibrary() {
        NativeTestSupport.setUp();
    }

    @Test
    void conflictBecomes409NamingTheHolderAndNotHeldBecomes404() {
        try (LockService service = new LockService(NativeLockCore.create(7))) {
            Map<String, Object> grant = service.acquire("k", "a", LockMode.EXCLUSIVE);
            assertEquals(7L, ((Number) grant.get("fencing_token")).longValue() >>> 40, "epoch in the high bits");

            LockConflictException conflict = assertThrows(LockConflictException.class, () -> service.acquire("k", "b", LockMode.EXCLUSIVE));
            assertEquals(RestStatus.CONFLICT, conflict.status());
            assertEquals(List.of("a"), conflict.getMetadata("es.holders"));

            LockNotHeldException notHeld = assertThrows(LockNotHeldException.class, () -> service.release("k", "b", null));
            assertEquals(RestStatus.NOT_FOUND, notHeld.status());
            assertEquals(List.of("b"), notHeld.getMetadata("es.owner"));

            assertThrows(LockNotHeldException.class, () -> service.release("k", "a", 12345L), "wrong token never releases");
            service.release("k", "a", ((Number) grant.get("fencing_token")).longValue());
            assertTrue(((List<?>) service.keyInfo("k").get("holders")).isEmpty());
        }
    }

    @Test
    void modeNamesAreParsedWithTheFieldNamed() {
        assertEquals(LockMode.SHARED, LockMode.parse("shared"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LockMode.parse("EXCLUSIVE"));
        assertTrue(e.getMessage().startsWith("[mode] must be one of [exclusive, shared]"), e.getMessage());
    }
}
