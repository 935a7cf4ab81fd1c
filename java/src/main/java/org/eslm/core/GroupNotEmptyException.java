package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 409: a group that has members cannot be deleted; they leave first. */
public final class GroupNotEmptyException extends GroupException {
    private static final long serialVersionUID = 1L;

    public GroupNotEmptyException(String message, String group, String member) {
        super(message, group, member);
    }

    public GroupNotEmptyException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.CONFLICT;
    }
}
