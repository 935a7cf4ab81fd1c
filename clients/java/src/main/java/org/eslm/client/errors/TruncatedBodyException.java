package org.eslm.client.errors;

import java.util.Map;

/** 400: the body ends in the middle of a JSON value. */
public class TruncatedBodyException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "x_content_e_o_f_exception";

    public TruncatedBodyException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
