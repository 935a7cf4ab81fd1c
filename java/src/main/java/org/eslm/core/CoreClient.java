package org.eslm.core;

import java.io.Closeable;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeLockException;
import org.eslm.bridge.NativeOp;

/**
 * The bridge client: every call into the node's Rust core goes through {@link #call}, which
 * parses the answer envelope ({@code {"result", "events", "tick_in_ms"}}) and maps native lock
 * outcomes to Elasticsearch exceptions with the single table in {@link NativeErrors}. Nothing of
 * type {@link Error} leaves it (docs/RELIABILITY.md "A panic in the core"); a panic in the core is
 * a {@link LockCorePanicException}, also handed to the {@link #onCorePanic} listener.
 */
public final class CoreClient implements Closeable {
    private static final Logger logger = LogManager.getLogger(CoreClient.class);

    /** One raw bridge call, as {@link NativeLockCore#call}; tests put a failing one in. */
    @FunctionalInterface
    interface Bridge {
        String call(NativeOp op, int partition, String argsJson);
    }

    private final Bridge bridge;
    private final Runnable closer;
    private volatile Consumer<LockCorePanicException> onCorePanic = e -> {};

    public CoreClient(NativeLockCore core) {
        this(core::call, core::close);
    }

    CoreClient(Bridge bridge, Runnable closer) {
        this.bridge = bridge;
        this.closer = closer;
    }

    /** Who learns of a panic in the core (the cluster code, which reopens the partition). */
    public void onCorePanic(Consumer<LockCorePanicException> listener) {
        this.onCorePanic = listener;
    }

    /** One bridge call; {@code argsJson} is the core's argument object as JSON text. */
    public Map<String, Object> call(NativeOp op, int partition, String argsJson) {
        return BridgeJson.parse(callText(op, partition, argsJson));
    }

    /** One bridge call answering the envelope's JSON text, for a caller that reads it its own way. */
    public String callText(NativeOp op, int partition, String argsJson) {
        try {
            return bridge.call(op, partition, argsJson);
        } catch (NativeLockException e) {
            RuntimeException mapped = NativeErrors.translate(e);
            if (mapped instanceof LockCorePanicException panic) {
                corePanicked(panic);
            }
            throw mapped;
        } catch (Error e) {
            logger.error(() -> "bridge call [" + op + "] on lock partition [" + partition + "] failed", e);
            throw NativeErrors.fromError(op, partition, e);
        }
    }

    private void corePanicked(LockCorePanicException panic) {
        try {
            onCorePanic.accept(panic);
        } catch (RuntimeException e) {
            logger.error("failed to start the recovery of a lock partition after a panic in the core", e);
        }
    }

    @Override
    public void close() {
        closer.run();
    }
}
