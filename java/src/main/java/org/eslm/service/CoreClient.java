package org.eslm.service;

import java.io.Closeable;
import java.util.Map;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeLockException;
import org.eslm.bridge.NativeOp;

/**
 * The bridge client: every call into the node's Rust core goes through {@link #call}, which
 * parses the answer envelope ({@code {"result", "events", "tick_in_ms"}}) and maps native lock
 * outcomes to Elasticsearch exceptions with the single table in {@link NativeErrors}.
 */
final class CoreClient implements Closeable {
    private final NativeLockCore core;

    CoreClient(NativeLockCore core) {
        this.core = core;
    }

    /** One bridge call; {@code argsJson} is the core's argument object as JSON text. */
    Map<String, Object> call(NativeOp op, int partition, String argsJson) {
        try {
            return BridgeJson.parse(core.call(op, partition, argsJson));
        } catch (NativeLockException e) {
            throw NativeErrors.translate(e);
        }
    }

    @Override
    public void close() {
        core.close();
    }
}
