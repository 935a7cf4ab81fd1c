package org.eslm.client.errors;

import java.util.Map;

/**
 * 503: the key's partition is moving, in recovery grace, or its owner is unconfirmed; or the node that got the request
 * is shutting down ({@code node_shutting_down} names it). The client retries it within the caller's budget before it
 * reaches the caller.
 */
public class PartitionUnavailableException extends LockException {
    private static final long serialVersionUID = 1L;

    public static final String TYPE = "lock_partition_unavailable_exception";

    public PartitionUnavailableException(int status, String reason, Map<String, Object> details) {
        super(status, TYPE, reason, details);
    }
}
