package org.eslm.service;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 503: the key's partition does not grant right now (moving, or in recovery grace); retry after {@code retry_after_ms}. */
public final class LockPartitionUnavailableException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockPartitionUnavailableException(String message, long retryAfterMs) {
        super(message);
        addMetadata("es.retry_after_ms", Long.toString(retryAfterMs));
    }

    public LockPartitionUnavailableException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.SERVICE_UNAVAILABLE;
    }
}
