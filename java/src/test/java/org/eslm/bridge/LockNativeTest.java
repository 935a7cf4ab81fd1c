package org.eslm.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.eslm.NativeTestSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The JNI boundary against the real native library (run under {@code -Xcheck:jni}): handles,
 * exception mapping, the answer envelope, and a deliberate Rust panic arriving as a Java exception.
 */
class LockNativeTest {
    @BeforeAll
    static void loadLibrary() {
        NativeTestSupport.setUp();
    }

    private static final String ACQUIRE_A = "{\"key\":\"k\",\"owner\":\"a\"}";

    @Test
    void versionNamesBridgeAndCore() {
        String version = LockNative.nativeVersion();
        assertTrue(version.startsWith("eslm-bridge "), version);
        assertTrue(version.contains("lock-core "), version);
    }

    @Test
    void panicInRustArrivesAsTheCorePanicCodeNeverAnErrorAndTheJvmCarriesOn() {
        NativeLockException e =
                assertThrows(NativeLockException.class, () -> LockNative.testOnlyPanic("deliberate test panic"));
        assertEquals(NativeLockException.CORE_PANIC, e.code());
        assertTrue(e.getMessage().contains("deliberate test panic"), e.getMessage());
        assertTrue(e.detailsJson().contains("\"partition\":null"), e.detailsJson());
        try (NativeLockCore core = NativeLockCore.create("{}")) {
            assertTrue(
                    core.call(NativeOp.ACQUIRE, 0, ACQUIRE_A).contains("\"fencing_token\""),
                    "the library still answers");
        }
    }

    @Test
    void answersAreEnvelopesWithEventsAndTheNextTick() {
        try (NativeLockCore core = NativeLockCore.create("{}")) {
            String granted = core.call(NativeOp.ACQUIRE, 0, ACQUIRE_A);
            assertTrue(granted.contains("\"result\":{\"granted\":"), granted);
            assertTrue(granted.contains("\"tick_in_ms\":"), granted);
            String queued = core.call(
                    NativeOp.ACQUIRE, 0, "{\"key\":\"k\",\"owner\":\"b\",\"wait_ms\":60000,\"request_id\":7}");
            assertTrue(queued.contains("\"queued\""), queued);
            String released = core.call(NativeOp.RELEASE, 0, ACQUIRE_A);
            assertTrue(released.contains("\"event\":\"granted\""), released);
            assertTrue(released.contains("\"request_id\":7"), released);
        }
    }

    @Test
    void conflictIsANativeLockExceptionWithHolderDetails() {
        try (NativeLockCore core = NativeLockCore.create("{}")) {
            core.call(NativeOp.ACQUIRE, 0, ACQUIRE_A);
            NativeLockException e = assertThrows(
                    NativeLockException.class, () -> core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"k\",\"owner\":\"b\"}"));
            assertEquals(NativeLockException.CONFLICT, e.code());
            assertTrue(e.getMessage().contains("[a]"), e.getMessage());
            assertTrue(e.detailsJson().contains("\"owner\":\"a\""), e.detailsJson());

            NativeLockException notHeld = assertThrows(
                    NativeLockException.class, () -> core.call(NativeOp.RELEASE, 0, "{\"key\":\"k\",\"owner\":\"b\"}"));
            assertEquals(NativeLockException.NOT_HELD, notHeld.code());
        }
    }

    @Test
    void invalidInputIsIllegalArgumentNamingTheField() {
        try (NativeLockCore core = NativeLockCore.create("{}")) {
            IllegalArgumentException blank = assertThrows(
                    IllegalArgumentException.class,
                    () -> core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"k\",\"owner\":\"  \"}"));
            assertTrue(blank.getMessage().startsWith("[owner]"), blank.getMessage());
            IllegalArgumentException longKey = assertThrows(
                    IllegalArgumentException.class,
                    () -> core.call(NativeOp.KEY_INFO, 0, "{\"key\":\"" + "k".repeat(513) + "\"}"));
            assertTrue(longKey.getMessage().startsWith("[key]"), longKey.getMessage());
            assertThrows(IllegalArgumentException.class, () -> core.call(NativeOp.ACQUIRE, 0, "{not json"));
            assertThrows(IllegalArgumentException.class, () -> core.call(NativeOp.ACQUIRE, 0, null));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> core.call(NativeOp.ACQUIRE, 5, ACQUIRE_A),
                    "unknown partition");
            assertThrows(
                    IllegalArgumentException.class,
                    () -> NativeLockCore.create("{\"partitions\":[{\"id\":0,\"epoch\":-1}]}"));
        }
    }

    @Test
    void handlesRejectZeroAndClosedAndDestroyIsIdempotent() {
        assertThrows(IllegalStateException.class, () -> LockNative.call(0, NativeOp.TICK.code(), -1, "{}"));
        NativeLockCore core = NativeLockCore.create("{}");
        core.close();
        assertTrue(core.isClosed());
        core.close();
        assertThrows(IllegalStateException.class, () -> core.call(NativeOp.TICK, -1, "{}"));

        long raw = LockNative.coreNew("{}");
        assertNotEquals(0, raw);
        assertTrue(LockNative.coreDestroy(raw));
        assertFalse(LockNative.coreDestroy(raw), "second destroy is a no-op");
        assertThrows(IllegalStateException.class, () -> LockNative.call(raw, NativeOp.TICK.code(), -1, "{}"));
    }
}
