package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 409: a queued acquire waited for its whole budget without being granted. */
public final class LockWaitTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockWaitTimeoutException(String message, String key, long waitedMs) {
        super(message);
        addMetadata("es.key", key);
        addMetadata("es.waited_ms", Long.toString(waitedMs));
    }

    public LockWaitTimeoutException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.CONFLICT;
    }
}
