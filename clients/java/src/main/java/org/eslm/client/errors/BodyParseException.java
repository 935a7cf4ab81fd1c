package org.eslm.client.errors;

import java.util.Map;

/** 400: the body is not a JSON object, has an unknown field, or a field of a JSON type it never takes. */
public class BodyParseException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "x_content_parse_exception";

    public BodyParseException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
