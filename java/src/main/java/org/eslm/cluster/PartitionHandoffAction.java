package org.eslm.cluster;

import java.io.IOException;
import java.util.Objects;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionRequestValidationException;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.transport.TransportRequestOptions;

/**
 * {@code internal:locks/partition/handoff}: a node that became a partition's owner asks the
 * previous owner for the partition's state (holders, leases, sessions, token counter). The
 * previous owner stops serving the partition and answers its snapshot, or none if it has
 * nothing to hand over (then the new owner waits out the recovery grace).
 */
public final class PartitionHandoffAction {
    public static final ActionType<Response> TYPE = new ActionType<>("internal:locks/partition/handoff");

    private PartitionHandoffAction() {}

    /** Asks the node {@code from} (its id) for partition {@code partition}. */
    public static final class Request extends ActionRequest {
        final String from;
        final int partition;

        public Request(String from, int partition) {
            this.from = from;
            this.partition = partition;
        }

        Request(StreamInput in) throws IOException {
            super(in);
            this.from = in.readString();
            this.partition = in.readVInt();
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeString(from);
            out.writeVInt(partition);
        }

        @Override
        public ActionRequestValidationException validate() {
            return null;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Request that && from.equals(that.from) && partition == that.partition;
        }

        @Override
        public int hashCode() {
            return Objects.hash(from, partition);
        }
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
    public static final class Transport extends WiredTransportAction<Request, Response> {
        private final PartitionManager partitions;

        @Inject
        public Transport(TransportWiring wiring, PartitionManager partitions) {
            super(TYPE, wiring, Request::new);
            this.partitions = partitions;
        }

        @Override
        protected void doExecute(Task task, Request request, ActionListener<Response> listener) {
            if (request.from.equals(clusterService.localNode().getId())) {
                ActionListener.completeWith(listener, () -> new Response(partitions.handOver(request.partition)));
                return;
            }
            DiscoveryNode from = clusterService.state().nodes().get(request.from);
            if (from == null) {
                listener.onResponse(new Response((String) null));
                return;
            }
            wiring.send(from, TYPE.name(), request, TransportRequestOptions.EMPTY, Response::new, listener);
        }
    }
}
