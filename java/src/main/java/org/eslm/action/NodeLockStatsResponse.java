package org.eslm.action;

import java.io.IOException;
import java.util.Map;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;

/** One node's lock statistics, as its core reports them. */
public final class NodeLockStatsResponse extends NodeCoreResponse<Map<String, Object>> {
    public NodeLockStatsResponse(DiscoveryNode node, Map<String, Object> stats) {
        super(node, stats, StreamOutput::writeGenericMap);
    }

    public NodeLockStatsResponse(StreamInput in, DiscoveryNode node) throws IOException {
        super(in, node, StreamInput::readGenericMap, StreamOutput::writeGenericMap);
    }

    public Map<String, Object> stats() {
        return payload();
    }
}
