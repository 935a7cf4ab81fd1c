package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 404: the session is unknown, ended or expired. */
public final class SessionNotFoundException extends LockException {
    private static final long serialVersionUID = 1L;

    public SessionNotFoundException(String message, String session) {
        super(message);
        addMetadata("es.session", session);
    }

    public SessionNotFoundException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.NOT_FOUND;
    }
}
