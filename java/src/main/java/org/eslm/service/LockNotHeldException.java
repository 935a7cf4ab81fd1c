package org.eslm.service;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 404: the caller does not hold the lock it tried to release (or not under that token). */
public final class LockNotHeldException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockNotHeldException(String message, String key, String owner) {
        super(message);
        addMetadata("es.key", key);
        addMetadata("es.owner", owner);
    }

    public LockNotHeldException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.NOT_FOUND;
    }
}
