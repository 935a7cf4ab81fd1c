package org.eslm.action;

import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import org.elasticsearch.action.support.nodes.BaseNodeResponse;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;

/** One node's lock statistics, as its core reports them. */
public final class NodeLockStatsResponse extends BaseNodeResponse {
    private final Map<String, Object> stats;

    public NodeLockStatsResponse(DiscoveryNode node, Map<String, Object> stats) {
        super(node);
        this.stats = stats;
    }

    public NodeLockStatsResponse(StreamInput in, DiscoveryNode node) throws IOException {
        super(in, node);
        this.stats = in.readGenericMap();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeGenericMap(stats);
    }

    public Map<String, Object> stats() {
        return stats;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NodeLockStatsResponse that && getNode().equals(that.getNode()) && stats.equals(that.stats);
    }

    @Override
    public int hashCode() {
        return Objects.hash(getNode(), stats);
    }
}
