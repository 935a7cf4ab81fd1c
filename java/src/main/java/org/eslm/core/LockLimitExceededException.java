package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 429: a configured limit (waiters per key, keys per request, locks, sessions) was reached; nothing changed. */
public final class LockLimitExceededException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockLimitExceededException(String message, String limit, long max) {
        super(message);
        addMetadata("es.limit", limit);
        addMetadata("es.max", Long.toString(max));
    }

    public LockLimitExceededException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.TOO_MANY_REQUESTS;
    }
}
