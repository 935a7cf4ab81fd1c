package org.eslm.client.errors;

import java.util.Map;

/** 404: the group does not exist (never created, or deleted). */
public class GroupNotFoundException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "group_not_found_exception";

    public GroupNotFoundException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
