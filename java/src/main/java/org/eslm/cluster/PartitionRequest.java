package org.eslm.cluster;

import java.io.IOException;
import java.util.Objects;
import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionRequestValidationException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;

/**
 * A question about one partition for one node (its id): the hand-over asks the previous owner,
 * the sync asks the current owner. Sent to any node, forwarded by {@link PartitionNodeAction}.
 */
public final class PartitionRequest extends ActionRequest {
    final String node;
    final int partition;

    public PartitionRequest(String node, int partition) {
        this.node = node;
        this.partition = partition;
    }

    PartitionRequest(StreamInput in) throws IOException {
        super(in);
        this.node = in.readString();
        this.partition = in.readVInt();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeString(node);
        out.writeVInt(partition);
    }

    @Override
    public ActionRequestValidationException validate() {
        return null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PartitionRequest that && node.equals(that.node) && partition == that.partition;
    }

    @Override
    public int hashCode() {
        return Objects.hash(node, partition);
    }
}
