package org.eslm.bridge;

import java.io.Closeable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Owns one native node core through its handle. Thread-safe; {@link #close()} is idempotent.
 *
 * <p>A call racing with {@code close()} either runs on the still-live core (the Rust side keeps
 * it alive for the call) or fails with {@link IllegalStateException}; it never touches freed
 * memory, because handles are registry ids, not pointers.
 */
public final class NativeLockCore implements Closeable {
    private final AtomicLong handle;

    private NativeLockCore(long handle) {
        this.handle = new AtomicLong(handle);
    }

    /** A new core whose fencing tokens carry {@code epoch}. The library must be loaded. */
    public static NativeLockCore create(long epoch) {
        return new NativeLockCore(LockNative.coreNew(epoch));
    }

    /** Try-lock; answers the grant as JSON. */
    public String acquire(String requestJson) {
        return LockNative.acquire(handle(), requestJson);
    }

    /** Release by the holder; answers the release as JSON. */
    public String release(String requestJson) {
        return LockNative.release(handle(), requestJson);
    }

    /** Holders of one key as JSON. */
    public String keyInfo(String key) {
        return LockNative.keyInfo(handle(), key);
    }

    /** Node-local facts as JSON. */
    public String diagnostics() {
        return LockNative.diagnostics(handle());
    }

    /** Whether {@link #close()} has run. */
    public boolean isClosed() {
        return handle.get() == 0;
    }

    private long handle() {
        long h = handle.get();
        if (h == 0) {
            throw new IllegalStateException("lock core is closed");
        }
        return h;
    }

    @Override
    public void close() {
        long h = handle.getAndSet(0);
        if (h != 0) {
            LockNative.coreDestroy(h);
        }
    }
}
