package org.eslm.action;

/** Presence checks shared by the request parsers; content rules (length, characters) are the core's. */
final class RequestFields {
    private RequestFields() {}

    /** @throws IllegalArgumentException {@code [field] is required} when {@code value} is null */
    static void require(String field, Object value) {
        if (value == null) {
            throw new IllegalArgumentException("[" + field + "] is required");
        }
    }
}
