package org.eslm.core;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;

/**
 * Base of the group outcomes (docs/API.md "Groups"): each names its group as {@code group} in the
 * error, and a member's as {@code member}; the subclass fixes the type and status.
 */
abstract class GroupException extends LockException {
    private static final long serialVersionUID = 1L;

    GroupException(String message, String group, String member) {
        super(message);
        addMetadata("es.group", group);
        if (member != null && member.isEmpty() == false) {
            addMetadata("es.member", member);
        }
    }

    GroupException(StreamInput in) throws IOException {
        super(in);
    }
}
