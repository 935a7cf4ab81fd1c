package org.eslm.action;

import java.io.IOException;
import java.util.List;
import java.util.Objects;
import org.elasticsearch.action.FailedNodeException;
import org.elasticsearch.action.support.nodes.BaseNodesResponse;
import org.elasticsearch.cluster.ClusterName;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.rest.action.RestActions;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;

/**
 * Every node's diagnostics (docs/API.md "GET /_locks/_diagnostics"): {@code _nodes} with the
 * nodes that did not answer and why ({@code failures}, as Elasticsearch's own nodes APIs show
 * them), {@code cluster_name}, and {@code nodes} by node id, each what
 * {@code GET /_locks/_node/diagnostics} answers on that node.
 */
public final class LockDiagnosticsResponse extends BaseNodesResponse<NodeLockDiagnosticsResponse>
        implements ToXContentObject {
    public LockDiagnosticsResponse(
            ClusterName clusterName, List<NodeLockDiagnosticsResponse> nodes, List<FailedNodeException> failures) {
        super(clusterName, nodes, failures);
    }

    public LockDiagnosticsResponse(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    protected List<NodeLockDiagnosticsResponse> readNodesFrom(StreamInput in) throws IOException {
        return in.readCollectionAsList(i -> new NodeLockDiagnosticsResponse(i, null));
    }

    @Override
    protected void writeNodesTo(StreamOutput out, List<NodeLockDiagnosticsResponse> nodes) throws IOException {
        out.writeCollection(nodes);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject();
        RestActions.buildNodesHeader(builder, params, this);
        builder.field("cluster_name", getClusterName().value());
        builder.startObject("nodes");
        for (NodeLockDiagnosticsResponse node : getNodes()) {
            builder.field(node.getNode().getId(), node.diagnostics());
        }
        builder.endObject();
        return builder.endObject();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockDiagnosticsResponse that
                && getClusterName().equals(that.getClusterName())
                && getNodes().equals(that.getNodes())
                && NodesFailures.same(failures(), that.failures());
    }

    @Override
    public int hashCode() {
        return Objects.hash(getClusterName(), getNodes());
    }
}
