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
    /** The partition argument of node-wide operations. */
    public static final int ALL_PARTITIONS = -1;

    private final AtomicLong handle;

    private NativeLockCore(long handle) {
        this.handle = new AtomicLong(handle);
    }

    /**
     * A new core. {@code nodeConfigJson}: {@code {"config"?: {...}, "partitions"?: [{"id", "epoch"}]}};
     * {@code {}} is partition 0 in epoch 1 with default settings. The library must be loaded.
     */
    public static NativeLockCore create(String nodeConfigJson) {
        return new NativeLockCore(LockNative.coreNew(nodeConfigJson));
    }

    /**
     * Runs one operation; answers the envelope {@code {"result", "events", "tick_in_ms"}}.
     *
     * @throws NativeLockException for lock outcomes, {@link IllegalArgumentException} for bad input
     */
    public String call(NativeOp op, int partition, String argsJson) {
        return LockNative.call(handle(), op.code(), partition, argsJson);
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
