package org.eslm.api;

import java.util.Map;
import org.eslm.bridge.BridgeField;

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
                (String) BridgeField.KEY.in(body),
                (String) BridgeField.OWNER.in(body),
                number(body, BridgeField.FENCING_TOKEN),
                number(body, BridgeField.LEASE_MS),
                number(body, BridgeField.WAITED_MS),
                Boolean.TRUE.equals(BridgeField.REENTRANT.in(body)),
                Map.copyOf(body));
    }

    private static long number(Map<String, Object> body, BridgeField field) {
        return field.in(body) instanceof Number n ? n.longValue() : 0L;
    }
}
