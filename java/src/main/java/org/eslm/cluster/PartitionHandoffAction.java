package org.eslm.cluster;

import java.io.IOException;
import java.util.Objects;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.injection.guice.Inject;

/**
 * {@code internal:locks/partition/handoff}: a node that became a partition's owner asks the
 * previous owner for the partition's state (holders, leases, sessions, token counter). The
 * previous owner stops serving the partition and answers its snapshot, or none if it has
 * nothing to hand over (then the new owner waits out the recovery grace).
 */
public final class PartitionHandoffAction {
    public static final ActionType<Response> TYPE = new ActionType<>("internal:locks/partition/handoff");

    private PartitionHandoffAction() {}

    /** Asks node {@code from} (its id), the previous owner, for partition {@code partition}. */
    public static PartitionRequest request(String from, int partition) {
        return new PartitionRequest(from, partition);
    }

    /** The snapshot as bridge JSON, or {@code null} when the previous owner has none. */
    public static final class Response extends ActionResponse {
        private final String snapshotJson;

        public Response(String snapshotJson) {
            this.snapshotJson = snapshotJson;
        }

        Response(StreamInput in) throws IOException {
            this.snapshotJson = in.readOptionalString();
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            out.writeOptionalString(snapshotJson);
        }

        public String snapshotJson() {
            return snapshotJson;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Response that && Objects.equals(snapshotJson, that.snapshotJson);
        }

        @Override
        public int hashCode() {
            return Objects.hashCode(snapshotJson);
        }
    }

    /** Forwards the request to the previous owner, which hands its partition over. */
    public static final class Transport extends PartitionNodeAction<Response> {
        private final PartitionManager partitions;

        @Inject
        public Transport(TransportWiring wiring, PartitionManager partitions) {
            super(TYPE, wiring, Response::new);
            this.partitions = partitions;
        }

        @Override
        protected void runHere(int partition, ActionListener<Response> listener) {
            ActionListener.completeWith(listener, () -> new Response(partitions.handOver(partition)));
        }

        @Override
        protected void nodeGone(String node, ActionListener<Response> listener) {
            listener.onResponse(new Response((String) null)); // nothing to hand over
        }
    }
}
