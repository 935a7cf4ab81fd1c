package org.eslm.core;

import java.io.IOException;
import java.util.List;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/**
 * 409: a try-lock found the key held by another owner; {@code holders} lists them. A key kept by a
 * lock-delay (docs/API.md "Lock-delay") also says how long it still runs, {@code retry_after_ms}.
 */
public final class LockConflictException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockConflictException(String message, String key, List<String> holders) {
        this(message, key, holders, 0);
    }

    public LockConflictException(String message, String key, List<String> holders, long retryAfterMs) {
        super(message);
        addMetadata("es.key", key);
        addMetadata("es.holders", holders);
        if (retryAfterMs > 0) {
            addMetadata("es.retry_after_ms", Long.toString(retryAfterMs));
        }
    }

    public LockConflictException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.CONFLICT;
    }
}
