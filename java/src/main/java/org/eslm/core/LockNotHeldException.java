package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/**
 * 404: the caller does not hold the lock it tried to release (or not under that token). {@code
 * ended} says why, when the core knows: {@code preempted} (docs/API.md "Preemption").
 */
public final class LockNotHeldException extends LockException {
    private static final long serialVersionUID = 1L;

    public LockNotHeldException(String message, String key, String owner) {
        this(message, key, owner, null);
    }

    public LockNotHeldException(String message, String key, String owner, String ended) {
        super(message);
        addMetadata("es.key", key);
        addMetadata("es.owner", owner);
        if (ended != null) {
            addMetadata("es.ended", ended);
        }
    }

    public LockNotHeldException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.NOT_FOUND;
    }
}
