/*
 * The one class that declares native methods. Keep it in step with rust/lock-jni/src/jni_api.rs.
 */
package org.eslm.bridge;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The JNI surface of {@code libeslm.so}. Every method here is implemented in Rust inside one
 * wrapper that catches panics and throws exactly one exception: {@link IllegalArgumentException}
 * for bad input, {@link IllegalStateException} for a closed handle, {@link NativeLockException}
 * for lock outcomes, a panic in the core (code {@link NativeLockException#CORE_PANIC}) and other
 * bugs ({@link NativeLockException#INTERNAL}). Never an {@link Error}: Elasticsearch halts the JVM
 * when one reaches its threads (docs/RELIABILITY.md "A panic in the core").
 *
 * <p>Callers use {@link NativeLockCore}, which owns a handle; the raw methods stay package-private.
 */
public final class LockNative {
    private static final Logger NATIVE_LOG = LogManager.getLogger("org.eslm.native");
    private static volatile Path loadedFrom;

    private LockNative() {}

    /**
     * Loads the native library once per JVM. Later calls with any path are no-ops, because a
     * library cannot be loaded twice into one class loader.
     *
     * @throws IllegalStateException if the file is missing, naming the path looked at, or cannot be
     *     loaded (e.g. a C library older than the one it was built against), with the linker's
     *     reason on the same line: an exception, not the {@link UnsatisfiedLinkError}
     */
    public static synchronized void load(Path library) {
        if (loadedFrom != null) {
            return;
        }
        Path absolute = library.toAbsolutePath().normalize();
        if (Files.isRegularFile(absolute) == false) {
            throw new IllegalStateException("native lock library not found at [" + absolute + "]");
        }
        systemLoad(absolute);
        loadedFrom = absolute;
    }

    /** {@link System#load}, its {@link UnsatisfiedLinkError} turned into one line naming the file. */
    static void systemLoad(Path absolute) {
        try {
            System.load(absolute.toString());
        } catch (UnsatisfiedLinkError e) {
            throw new IllegalStateException(
                    "cannot load the native lock library [" + absolute + "]: " + e.getMessage(), e);
        }
    }

    /** Where the library was loaded from, or {@code null} before {@link #load}. */
    public static Path loadedFrom() {
        return loadedFrom;
    }

    /** Bridge and core versions, e.g. {@code eslm-bridge 0.1.0 (lock-core 0.1.0)}. */
    public static String nativeVersion() {
        return version();
    }

    static native String version();

    /** A node core from {@code {"config"?: {...}, "partitions"?: [{"id", "epoch"}]}}. */
    static native long coreNew(String nodeConfigJson);

    static native boolean coreDestroy(long handle);

    /**
     * One operation ({@link NativeOp#code()}) on {@code partition} ({@code -1} for node-wide ops);
     * answers {@code {"result", "events", "tick_in_ms"}}.
     */
    static native String call(long handle, int op, int partition, String argsJson);

    /**
     * Panics in Rust on purpose; tests prove the panic arrives as a {@link NativeLockException}
     * with code {@link NativeLockException#CORE_PANIC}.
     */
    static native void testOnlyPanic(String message);

    /**
     * Called from Rust at the end of a native call with each queued {@code tracing} line, so
     * Rust logs land in the node's log under the logger {@code org.eslm.native}.
     */
    static void log(int level, String target, String message) {
        NATIVE_LOG.log(NativeLogLevel.log4j(level), "[{}] {}", target, message);
    }
}
