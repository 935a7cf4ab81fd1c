package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/**
 * 409: a semaphore acquire named another {@code limit} than the one the semaphore has while
 * anyone holds or waits; {@code limit} is the semaphore's (docs/LOCK_CORE.md, "Semaphores").
 */
public final class SemaphoreLimitMismatchException extends LockException {
    private static final long serialVersionUID = 1L;

    public SemaphoreLimitMismatchException(String message, String key, long limit) {
        super(message);
        addMetadata("es.key", key);
        addMetadata("es.limit", Long.toString(limit));
    }

    public SemaphoreLimitMismatchException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.CONFLICT;
    }
}
