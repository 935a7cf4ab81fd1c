package org.eslm.api;

import java.util.Map;

/**
 * A granted lock, as {@code POST /_locks/{key}/_acquire} answers it (docs/API.md). The fencing
 * token is what a holder writes with ({@code version_type=external_gte}, docs/API.md "The
 * fencing recipe"); {@link #body} keeps every field the node sent.
 */
public record Grant(
        String key,
        String owner,
        long fencingToken,
        long leaseMs,
        long waitedMs,
        boolean reentrant,
        Map<String, Object> body) {

    static Grant of(Map<String, Object> body) {
        return new Grant(
                (String) body.get("key"),
                (String) body.get("owner"),
                number(body, "fencing_token"),
                number(body, "lease_ms"),
                number(body, "waited_ms"),
                Boolean.TRUE.equals(body.get("reentrant")),
                Map.copyOf(body));
    }

    private static long number(Map<String, Object> body, String field) {
        return body.get(field) instanceof Number n ? n.longValue() : 0L;
    }
}
