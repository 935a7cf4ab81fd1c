package org.eslm.core;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.rest.RestStatus;

/**
 * 503: the key's partition does not grant right now (moving, or in recovery grace), or the node
 * that received the request is shutting down; retry after {@code retry_after_ms}.
 */
public final class LockPartitionUnavailableException extends LockException {
    private static final long serialVersionUID = 1L;
    private static final String APPLIED_ANSWER = "es.applied_answer";
    /** Shown as {@code node_shutting_down} in the error JSON (docs/API.md "Errors"). */
    private static final String NODE_SHUTTING_DOWN = "es.node_shutting_down";

    public LockPartitionUnavailableException(String message, long retryAfterMs) {
        super(message);
        addMetadata("es.retry_after_ms", Long.toString(retryAfterMs));
    }

    /**
     * The answer of a node whose shutdown has begun to a lock request it received
     * ({@link NodeShutdown}): the client sends the request again through another node.
     */
    public static LockPartitionUnavailableException nodeShuttingDown(String nodeName) {
        LockPartitionUnavailableException e = new LockPartitionUnavailableException(
                "node [" + nodeName + "] is shutting down; send the request to another node", 0);
        e.addMetadata(NODE_SHUTTING_DOWN, nodeName);
        return e;
    }

    /**
     * This failure, carrying {@code answer}: the answer of a change the owner had applied when its
     * commit failed. Such a change is not lost for sure: a planned move hands the previous owner's
     * table over as it stands, applied change included. So a coordinator that retries an ending
     * change (a release, a session end) and then finds nothing to end answers this instead of 404
     * (action.PartitionRouter; docs/ARCHITECTURE.md "Replication").
     */
    public LockPartitionUnavailableException withAppliedAnswer(Map<String, Object> answer) {
        LockPartitionUnavailableException e = new LockPartitionUnavailableException(getMessage(), 0);
        e.addMetadata(APPLIED_ANSWER, BridgeJson.toJson(answer));
        return e;
    }

    /** The answer {@link #withAppliedAnswer} attached, or {@code null}. */
    public Map<String, Object> appliedAnswer() {
        List<String> answer = getMetadata(APPLIED_ANSWER);
        return answer == null || answer.isEmpty() ? null : BridgeJson.parse(answer.get(0));
    }

    public LockPartitionUnavailableException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public RestStatus status() {
        return RestStatus.SERVICE_UNAVAILABLE;
    }
}
