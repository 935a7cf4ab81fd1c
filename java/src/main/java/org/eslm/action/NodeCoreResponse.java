package org.eslm.action;

import java.io.IOException;
import java.util.Objects;
import org.elasticsearch.action.support.nodes.BaseNodeResponse;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.common.io.stream.Writeable;

/**
 * One node's answer to a nodes action, as its core gave it: the node, then one payload on the
 * wire; two answers are equal when they are of the same class, from the same node, with equal
 * payloads. The stats and list node responses differ only in the payload's type.
 */
abstract class NodeCoreResponse<T> extends BaseNodeResponse {
    private final T payload;
    private final Writeable.Writer<T> writer;

    NodeCoreResponse(DiscoveryNode node, T payload, Writeable.Writer<T> writer) {
        super(node);
        this.payload = payload;
        this.writer = writer;
    }

    NodeCoreResponse(StreamInput in, DiscoveryNode node, Writeable.Reader<T> reader, Writeable.Writer<T> writer)
            throws IOException {
        super(in, node);
        this.payload = reader.read(in);
        this.writer = writer;
    }

    @Override
    public final void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        writer.write(out, payload);
    }

    final T payload() {
        return payload;
    }

    @Override
    public final boolean equals(Object o) {
        return o != null
                && o.getClass() == getClass()
                && getNode().equals(((NodeCoreResponse<?>) o).getNode())
                && payload.equals(((NodeCoreResponse<?>) o).payload);
    }

    @Override
    public final int hashCode() {
        return Objects.hash(getNode(), payload);
    }
}
