package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.rest.RestStatus;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeLockException;
import org.eslm.bridge.NativeOp;
import org.eslm.core.LockConflictException;
import org.eslm.core.LockLimitExceededException;
import org.eslm.core.LockNotHeldException;
import org.eslm.core.NativeErrors;
import org.eslm.core.SessionNotFoundException;
import org.eslm.settings.LockSettings;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Translation of real native outcomes into Elasticsearch exceptions, and the REST body shapes. */
class LockServiceTest {
    @BeforeAll
    static void loadLibrary() {
        NativeTestSupport.setUp();
    }

    private static RuntimeException outcome(NativeLockCore core, NativeOp op, String args) {
        NativeLockException e = assertThrows(NativeLockException.class, () -> core.call(op, 0, args));
        return NativeErrors.translate(e);
    }

    @Test
    void nativeOutcomesBecomeTypedExceptionsWithStatusAndDetails() {
        try (NativeLockCore core = NativeLockCore.create("{}")) {
            core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"k\",\"owner\":\"a\"}");
            LockConflictException conflict = assertInstanceOf(
                    LockConflictException.class, outcome(core, NativeOp.ACQUIRE, "{\"key\":\"k\",\"owner\":\"b\"}"));
            assertEquals(RestStatus.CONFLICT, conflict.status());
            assertEquals(List.of("a"), conflict.getMetadata("es.holders"));
            assertEquals("lock_conflict_exception", ElasticsearchException.getExceptionName(conflict));

            LockNotHeldException notHeld = assertInstanceOf(
                    LockNotHeldException.class, outcome(core, NativeOp.RELEASE, "{\"key\":\"k\",\"owner\":\"b\"}"));
            assertEquals(RestStatus.NOT_FOUND, notHeld.status());

            SessionNotFoundException session = assertInstanceOf(
                    SessionNotFoundException.class,
                    outcome(core, NativeOp.SESSION_KEEPALIVE, "{\"session\":\"nope\",\"owner\":\"a\"}"));
            assertEquals(RestStatus.NOT_FOUND, session.status());
            assertEquals(List.of("nope"), session.getMetadata("es.session"));
        }
    }

    @Test
    void limitsBecome429() {
        String config = "{\"config\":{\"limits\":{\"max_keys_per_request\":2}}}";
        try (NativeLockCore core = NativeLockCore.create(config)) {
            RuntimeException e = outcome(
                    core,
                    NativeOp.ACQUIRE_MANY,
                    "{\"owner\":\"a\",\"locks\":[{\"key\":\"x\"},{\"key\":\"y\"},{\"key\":\"z\"}]}");
            LockLimitExceededException limit = assertInstanceOf(LockLimitExceededException.class, e);
            assertEquals(RestStatus.TOO_MANY_REQUESTS, limit.status());
        }
    }

    @Test
    void settingsAreCrossChecked() {
        var ok = LockSettings.Values.of(org.elasticsearch.common.settings.Settings.EMPTY);
        assertEquals(30_000L, ok.coreConfig().get("default_lease_ms"));
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> LockSettings.Values.of(org.elasticsearch.common.settings.Settings.builder()
                        .put("locks.lease.default", "20m")
                        .put("locks.lease.max", "10m")
                        .build()));
        assertTrue(e.getMessage().contains("[locks.lease.default]"), e.getMessage());
        IllegalArgumentException durability = assertThrows(
                IllegalArgumentException.class,
                () -> LockSettings.DURABILITY.get(org.elasticsearch.common.settings.Settings.builder()
                        .put("locks.durability", "disk")
                        .build()));
        assertTrue(
                durability.getMessage().contains("[locks.durability] must be [replicated] or [memory]"),
                durability.getMessage());
        assertEquals("replicated", LockSettings.DURABILITY.get(org.elasticsearch.common.settings.Settings.EMPTY));
    }
}
