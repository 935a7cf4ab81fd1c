package org.eslm.action;

import org.elasticsearch.action.support.nodes.BaseNodesRequest;

/** {@code GET /_locks/_stats}: lock statistics of every node (or of the nodes named). */
public final class LockStatsRequest extends BaseNodesRequest {
    public LockStatsRequest(String... nodeIds) {
        super(nodeIds);
    }
}
