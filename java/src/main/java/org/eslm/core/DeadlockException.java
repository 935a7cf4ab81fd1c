package org.eslm.core;

import java.io.IOException;
import java.util.List;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 409: the request was chosen as the victim of a deadlock; {@code cycle} names the owners in it, victim first. */
public final class DeadlockException extends LockException {
    private static final long serialVersionUID = 1L;

    public DeadlockException(String message, String key, List<String> cycle) {
        super(message);
        addMetadata("es.key", key);
        addMetadata("es.cycle", cycle);
    }

    public DeadlockException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.CONFLICT;
    }
}
