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
 * The hand-over's newer form also carries the asker's epoch of the partition ({@link
 * PartitionHandoffAction#IN_EPOCH}); the epoch is on the wire exactly when the request has one,
 * and each action reads the form it is sent in.
 */
public final class PartitionRequest extends ActionRequest {
    /** No epoch: the request of an action whose wire form has none. */
    static final long NO_EPOCH = -1;

    final String node;
    final int partition;
    /** The asker's epoch of the partition, or {@link #NO_EPOCH}. */
    final long epoch;

    public PartitionRequest(String node, int partition) {
        this(node, partition, NO_EPOCH);
    }

    PartitionRequest(String node, int partition, long epoch) {
        this.node = node;
        this.partition = partition;
        this.epoch = epoch;
    }

    PartitionRequest(StreamInput in) throws IOException {
        this(in, false);
    }

    private PartitionRequest(StreamInput in, boolean withEpoch) throws IOException {
        super(in);
        this.node = in.readString();
        this.partition = in.readVInt();
        this.epoch = withEpoch ? in.readVLong() : NO_EPOCH;
    }

    /** Reads the form that carries the asker's epoch. */
    static PartitionRequest readWithEpoch(StreamInput in) throws IOException {
        return new PartitionRequest(in, true);
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeString(node);
        out.writeVInt(partition);
        if (epoch != NO_EPOCH) {
            out.writeVLong(epoch);
        }
    }

    @Override
    public ActionRequestValidationException validate() {
        return null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PartitionRequest that
                && node.equals(that.node)
                && partition == that.partition
                && epoch == that.epoch;
    }

    @Override
    public int hashCode() {
        return Objects.hash(node, partition, epoch);
    }
}
