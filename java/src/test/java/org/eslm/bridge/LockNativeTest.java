package org.eslm.bridge;

import org.eslm.NativeTestSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JNI boundary against the real native library (run under {@code -Xcheck:jni}): handles,
 * exception mapping, and a deliberate Rust panic arriving as a Java exception.
 */
class LockNativeTest {
    @BeforeAll
    static void loadLibrary() {
        NativeTestSupport.setUp();
    }

    @Test
    void versionNamesBridgeAndCore() {
        String version = LockNative.nativeVersion();
        assertTrue(version.startsWith("eslm-bridge "), version);
        assertTrue(version.contains("lock-core "), version);
    }

    @Test
    void panicInRustArrivesAsAssertionErrorAndTheJvmCarriesOn() {
        AssertionError e = assertThrows(AssertionError.class, () -> LockNative.testOnlyPanic("deliberate test panic"));
        assertTrue(e.getMessage().contains("deliberate test panic"), e.getMessage());
        // The library still answers after the panic.
        try (NativeLockCore core = NativeLockCore.create(1)) {
            assertTrue(core.acquire("{\"key\":\"after-panic\",\"owner\":\"a\"}").contains("\"fencing_token\""));
        }
    }

    @Test
    void conflictIsANativeLockExceptionWithHolderDetails() {
        try (NativeLockCore core = NativeLockCore.create(1)) {
            core.acquire("{\"key\":\"k\",\"owner\":\"a\"}");
            NativeLockException e = assertThrows(NativeLockException.class, () -> core.acquire("{\"key\":\"k\",\"owner\":\"b\"}"));
            assertEquals(NativeLockException.CONFLICT, e.code());
            assertTrue(e.getMessage().contains("[a]"), e.getMessage());
            assertTrue(e.detailsJson().contains("\"owner\":\"a\""), e.detailsJson());

            NativeLockException notHeld = assertThrows(
                NativeLockException.class,
                () -> core.release("{\"key\":\"k\",\"owner\":\"b\"}")
            );
            assertEquals(NativeLockException.NOT_HELD, notHeld.code());
        }
    }

    @Test
    void invalidInputIsIllegalArgumentNamingTheField() {
        try (NativeLockCore core = NativeLockCore.create(1)) {
            IllegalArgumentException blank = assertThrows(
                IllegalArgumentException.class,
                () -> core.acquire("{\"key\":\"k\",\"owner\":\"  \"}")
            );
            assertTrue(blank.getMessage().startsWith("[owner]"), blank.getMessage());
            IllegalArgumentException longKey = assertThrows(
                IllegalArgumentException.class,
                () -> core.keyInfo("k".repeat(513))
            );
            assertTrue(longKey.getMessage().startsWith("[key]"), longKey.getMessage());
            assertThrows(IllegalArgumentException.class, () -> core.acquire("{not json"));
            assertThrows(IllegalArgumentException.class, () -> core.acquire(null));
            assertThrows(IllegalArgumentException.class, () -> NativeLockCore.create(-1));
        }
    }

    @Test
    void handlesRejectZeroAndClosedAndDestroyIsIdempotent() {
        assertThrows(IllegalStateException.class, () -> LockNative.keyInfo(0, "k"));
        NativeLockCore core = NativeLockCore.create(1);
        core.close();
        assertTrue(core.isClosed());
        core.close();
        assertThrows(IllegalStateException.class, () -> core.keyInfo("k"));

        long raw = LockNative.coreNew(1);
        assertNotEquals(0, raw);
        assertTrue(LockNative.coreDestroy(raw));
        assertFalse(LockNative.coreDestroy(raw), "second destroy is a no-op");
        assertThrows(IllegalStateException.class, () -> LockNative.keyInfo(raw, "k"));
    }
}
