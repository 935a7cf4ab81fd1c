package org.eslm.client.errors;

import java.util.Map;

/** 409: the member is in the group already, under another acquisition. */
public class MemberAlreadyJoinedException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "member_already_joined_exception";

    public MemberAlreadyJoinedException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
