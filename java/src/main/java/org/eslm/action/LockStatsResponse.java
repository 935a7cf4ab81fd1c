package org.eslm.action;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.elasticsearch.action.FailedNodeException;
import org.elasticsearch.action.support.nodes.BaseNodesResponse;
import org.elasticsearch.cluster.ClusterName;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;

/**
 * Per-node lock statistics and their cluster total. Counters and gauges add up; time
 * percentiles (over each node's last minute, rust/lock-core/src/histogram.rs) in the total are
 * the largest node's (an upper bound), since percentiles of different nodes cannot be added.
 */
public final class LockStatsResponse extends BaseNodesResponse<NodeLockStatsResponse> implements ToXContentObject {
    static final List<String> TIMES = List.of("wait_time_ms", "hold_time_ms");
    /** The fields of a time histogram that add up over nodes: samples since start, samples in the window. */
    static final List<String> COUNTS = List.of("count", "window_count");

    public LockStatsResponse(
            ClusterName clusterName, List<NodeLockStatsResponse> nodes, List<FailedNodeException> failures) {
        super(clusterName, nodes, failures);
    }

    public LockStatsResponse(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    protected List<NodeLockStatsResponse> readNodesFrom(StreamInput in) throws IOException {
        return in.readCollectionAsList(i -> new NodeLockStatsResponse(i, null));
    }

    @Override
    protected void writeNodesTo(StreamOutput out, List<NodeLockStatsResponse> nodes) throws IOException {
        out.writeCollection(nodes);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject();
        builder.startObject("_nodes")
                .field("total", getNodes().size() + failures().size())
                .field("successful", getNodes().size())
                .field("failed", failures().size())
                .endObject();
        builder.field("cluster_name", getClusterName().value());
        builder.startObject("nodes");
        for (NodeLockStatsResponse node : getNodes()) {
            builder.startObject(node.getNode().getId())
                    .field("name", node.getNode().getName())
                    .field("locks", node.stats())
                    .endObject();
        }
        builder.endObject();
        builder.field("total", total());
        return builder.endObject();
    }

    /** The cluster total: sums of the numbers, maxima of the time percentiles. */
    Map<String, Object> total() {
        Map<String, Object> total = new LinkedHashMap<>();
        for (NodeLockStatsResponse node : getNodes()) {
            for (Map.Entry<String, Object> e : node.stats().entrySet()) {
                if (e.getValue() instanceof Number n) {
                    total.merge(e.getKey(), n.longValue(), (a, b) -> (Long) a + (Long) b);
                } else if (TIMES.contains(e.getKey()) && e.getValue() instanceof Map<?, ?> times) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> merged =
                            (Map<String, Object>) total.computeIfAbsent(e.getKey(), k -> new LinkedHashMap<>());
                    for (Map.Entry<?, ?> t : times.entrySet()) {
                        long v = ((Number) t.getValue()).longValue();
                        String k = (String) t.getKey();
                        merged.merge(
                                k,
                                v,
                                (a, b) -> COUNTS.contains(k) ? (Long) a + (Long) b : Math.max((Long) a, (Long) b));
                    }
                }
            }
        }
        return total;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockStatsResponse that
                && getClusterName().equals(that.getClusterName())
                && getNodes().equals(that.getNodes())
                && NodesFailures.same(failures(), that.failures());
    }

    @Override
    public int hashCode() {
        return Objects.hash(getClusterName(), getNodes());
    }
}
