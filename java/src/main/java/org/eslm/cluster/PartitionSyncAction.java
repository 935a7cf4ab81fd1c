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
import org.eslm.service.LockService;

/**
 * {@code internal:locks/partition/sync}: a copy of a partition that is finishing its recovery
 * and has no standby table yet asks the partition's owner to send the whole state to its copies
 * now; the answer comes once that batch reached them (docs/ARCHITECTURE.md "Replication").
 */
public final class PartitionSyncAction {
    public static final ActionType<ActionResponse.Empty> TYPE = new ActionType<>("internal:locks/partition/sync");

    private PartitionSyncAction() {}

    /** Asks the node {@code owner} (its id) to sync partition {@code partition}'s copies. */
    public static final class Request extends ActionRequest {
        final String owner;
        final int partition;

        public Request(String owner, int partition) {
            this.owner = owner;
            this.partition = partition;
        }

        Request(StreamInput in) throws IOException {
            super(in);
            this.owner = in.readString();
            this.partition = in.readVInt();
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeString(owner);
            out.writeVInt(partition);
        }

        @Override
        public ActionRequestValidationException validate() {
            return null;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Request that && owner.equals(that.owner) && partition == that.partition;
        }

        @Override
        public int hashCode() {
            return Objects.hash(owner, partition);
        }
    }

    /** Forwards the request to the owner, which sends the whole state to the partition's copies. */
    public static final class Transport extends WiredTransportAction<Request, ActionResponse.Empty> {
        private final LockService locks;

        @Inject
        public Transport(TransportWiring wiring, LockService locks) {
            super(TYPE, wiring, Request::new);
            this.locks = locks;
        }

        @Override
        protected void doExecute(Task task, Request request, ActionListener<ActionResponse.Empty> listener) {
            if (request.owner.equals(clusterService.localNode().getId())) {
                locks.syncCopies(request.partition, listener.map(ignored -> ActionResponse.Empty.INSTANCE));
                return;
            }
            DiscoveryNode owner = clusterService.state().nodes().get(request.owner);
            if (owner == null) {
                listener.onFailure(new IllegalStateException("node [" + request.owner + "] left the cluster"));
                return;
            }
            wiring.send(
                    owner,
                    TYPE.name(),
                    request,
                    TransportRequestOptions.EMPTY,
                    in -> ActionResponse.Empty.INSTANCE,
                    listener);
        }
    }
}
