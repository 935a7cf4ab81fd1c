package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 404: the group does not exist (never created, or deleted). */
public final class GroupNotFoundException extends GroupException {
    private static final long serialVersionUID = 1L;

    public GroupNotFoundException(String message, String group, String member) {
        super(message, group, member);
    }

    public GroupNotFoundException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.NOT_FOUND;
    }
}
