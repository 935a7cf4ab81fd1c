package org.eslm.client.errors;

import java.util.Map;

/** 409: a group that has members cannot be deleted. */
public class GroupNotEmptyException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "group_not_empty_exception";

    public GroupNotEmptyException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
