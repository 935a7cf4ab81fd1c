package org.eslm.action;

import java.io.IOException;
import java.util.Map;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;

/** One node's diagnostics, as {@code GET /_locks/_node/diagnostics} shows them on that node. */
public final class NodeLockDiagnosticsResponse extends NodeCoreResponse<Map<String, Object>> {
    public NodeLockDiagnosticsResponse(DiscoveryNode node, Map<String, Object> diagnostics) {
        super(node, diagnostics, StreamOutput::writeGenericMap);
    }

    public NodeLockDiagnosticsResponse(StreamInput in, DiscoveryNode node) throws IOException {
        super(in, node, StreamInput::readGenericMap, StreamOutput::writeGenericMap);
    }

    public Map<String, Object> diagnostics() {
        return payload();
    }
}
