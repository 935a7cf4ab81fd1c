package org.eslm.service;

import java.io.IOException;
import java.util.List;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 409: a try-lock found the key held by another owner; {@code holders} lists them. */
public final class LockConflictException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockConflictException(String message, String key, List<String> holders) {
        super(message);
        addMetadata("es.key", key);
        addMetadata("es.holders", holders);
    }

    public LockConflictException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.CONFLICT;
    }
}
