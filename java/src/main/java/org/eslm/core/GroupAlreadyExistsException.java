package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 409: a group of that name exists already. */
public final class GroupAlreadyExistsException extends GroupException {
    private static final long serialVersionUID = 1L;

    public GroupAlreadyExistsException(String message, String group, String member) {
        super(message, group, member);
    }

    public GroupAlreadyExistsException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.CONFLICT;
    }
}
