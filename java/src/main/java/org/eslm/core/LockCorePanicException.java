package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/**
 * 500: the Rust core panicked while serving the request (a bug). Only this request failed; the
 * node lives on, and the lock partition the panic happened in ({@code partition}, served in
 * {@code epoch}) is closed on this node and reopened from its replicated state in a higher epoch
 * (docs/RELIABILITY.md "A panic in the core"). Until then calls on it fail as retryable.
 * {@code partition} is -1 when the panic happened outside any partition.
 */
public final class LockCorePanicException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockCorePanicException(String message, long partition, long epoch) {
        super(message);
        addMetadata("es.partition", Long.toString(partition));
        addMetadata("es.epoch", Long.toString(epoch));
    }

    public LockCorePanicException(StreamInput in) throws IOException {
        super(in);
    }

    /** The partition the core panicked in; -1 when none. */
    public int partition() {
        return (int) numberMetadata("es.partition");
    }

    /** The epoch that partition served in when the core panicked; -1 when unknown. */
    public long epoch() {
        return numberMetadata("es.epoch");
    }

    private long numberMetadata(String key) {
        try {
            return Long.parseLong(getMetadata(key).get(0));
        } catch (RuntimeException e) {
            return -1;
        }
    }

    @Override
    public RestStatus status() {
        return RestStatus.INTERNAL_SERVER_ERROR;
    }
}
