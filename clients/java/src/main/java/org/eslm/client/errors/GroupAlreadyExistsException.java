package org.eslm.client.errors;

import java.util.Map;

/** 409: a group of that name exists already. */
public class GroupAlreadyExistsException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "group_already_exists_exception";

    public GroupAlreadyExistsException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
