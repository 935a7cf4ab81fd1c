package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/** 409: the member is in the group already, under another acquisition. */
public final class MemberAlreadyJoinedException extends GroupException {
    private static final long serialVersionUID = 1L;

    public MemberAlreadyJoinedException(String message, String group, String member) {
        super(message, group, member);
    }

    public MemberAlreadyJoinedException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.CONFLICT;
    }
}
