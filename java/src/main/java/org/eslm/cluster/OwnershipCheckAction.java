package org.eslm.cluster;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionRequestValidationException;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.NotMasterException;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.transport.TransportRequestOptions;

/**
 * {@code internal:locks/ownership/check}: an owner asks the elected master whether it still owns
 * its partitions in their epochs. Where copies renew no lease, owners grant only while a recent
 * answer said yes, so a node cut off from the cluster (or frozen and resumed) stops granting on its
 * own before a new owner serves — no double grant, even with a stale cluster state; and every
 * question is what the master's watch for silent owners hears ({@link SilentOwners}).
 */
public final class OwnershipCheckAction {
    public static final ActionType<Response> TYPE = new ActionType<>("internal:locks/ownership/check");
    /**
     * How long an owner waits for the master's answer. An answer older than
     * {@link org.eslm.settings.LockSettings#OWNERSHIP_WINDOW} is of no use; this bounds how many questions can
     * be in flight at {@link OwnerChecks#INTERVAL} when the master is slow.
     */
    static final TimeValue ASK_TIMEOUT = TimeValue.timeValueSeconds(5);

    private OwnershipCheckAction() {}

    /**
     * "I am {@code owner}; do I own these partitions in these epochs?", asked from the cluster
     * state of version {@code stateVersion} (the one the asker applied).
     */
    public static final class Request extends ActionRequest {
        final String master;
        final String owner;
        final Map<Integer, Long> epochs;
        final long stateVersion;

        public Request(String master, String owner, Map<Integer, Long> epochs, long stateVersion) {
            this.master = master;
            this.owner = owner;
            this.epochs = epochs;
            this.stateVersion = stateVersion;
        }

        Request(StreamInput in) throws IOException {
            super(in);
            this.master = in.readString();
            this.owner = in.readString();
            this.epochs = in.readMap(StreamInput::readVInt, StreamInput::readVLong);
            this.stateVersion = in.readVLong();
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeString(master);
            out.writeString(owner);
            out.writeMap(epochs, StreamOutput::writeVInt, StreamOutput::writeVLong);
            out.writeVLong(stateVersion);
        }

        @Override
        public ActionRequestValidationException validate() {
            return null;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Request that
                    && master.equals(that.master)
                    && owner.equals(that.owner)
                    && epochs.equals(that.epochs)
                    && stateVersion == that.stateVersion;
        }

        @Override
        public int hashCode() {
            return Objects.hash(master, owner, epochs, stateVersion);
        }
    }

    /** Per partition: still yours in that epoch? */
    public static final class Response extends ActionResponse {
        private final Map<Integer, Boolean> owned;

        Response(Map<Integer, Boolean> owned) {
            this.owned = owned;
        }

        Response(StreamInput in) throws IOException {
            this.owned = in.readMap(StreamInput::readVInt, StreamInput::readBoolean);
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            out.writeMap(owned, StreamOutput::writeVInt, StreamOutput::writeBoolean);
        }

        public Map<Integer, Boolean> owned() {
            return owned;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Response that && owned.equals(that.owned);
        }

        @Override
        public int hashCode() {
            return owned.hashCode();
        }
    }

    /** Sends the question to the master; the master answers from its own cluster state. */
    public static final class Transport extends WiredTransportAction<Request, Response> {
        private final SilentOwners silentOwners;

        /**
         * Also starts the master's watch for silent owners ({@link SilentOwners}), which hears the
         * questions this action answers and fails primaries through {@code failure}.
         */
        @Inject
        public Transport(
                TransportWiring wiring,
                SilentOwners silentOwners,
                SilentPrimaryFailure failure,
                ThreadPool threadPool) {
            super(TYPE, wiring, Request::new);
            this.silentOwners = silentOwners;
            silentOwners.start(clusterService, threadPool, failure);
        }

        @Override
        protected void doExecute(Task task, Request request, ActionListener<Response> listener) {
            ClusterState state = clusterService.state();
            if (request.master.equals(state.nodes().getLocalNodeId())) {
                ActionListener.completeWith(listener, () -> answer(state, request, silentOwners));
                return;
            }
            DiscoveryNode master = state.nodes().get(request.master);
            if (master == null) {
                listener.onFailure(new IllegalStateException(
                        "master [" + request.master + "] is not in this node's cluster state"));
                return;
            }
            wiring.send(
                    master,
                    TYPE.name(),
                    request,
                    TransportRequestOptions.timeout(ASK_TIMEOUT),
                    Response::new,
                    listener);
        }

        /**
         * The master's answer. A node that is no longer (or not yet) the elected master knows
         * nothing about ownership and says so with a failure, never with a "no": during an
         * election the owner's question can reach the master that just stepped down, and a "no"
         * would close a partition whose primary and term did not change (its holders lost, its
         * token counter restarted). The owner keeps its last confirmation and asks the new master.
         *
         * <p>A master that has not yet applied the cluster state the owner asks from (a follower
         * applies a committed state before the master does, and the master applies it only once
         * every follower did or {@code cluster.publish.timeout} ran out: 30 s behind a frozen
         * follower) answers only about the partitions its own state shows the asker holding in the
         * asked epoch. Both states agree on those (a primary term only rises), so "yours" is as
         * true as from the newer state, and the owner is heard: refusing the whole question would
         * leave a live owner unheard for the rest of the publication, and the watch for silent
         * owners would fail it over (docs/ARCHITECTURE.md "Silent owners"). About a partition its
         * older state shows elsewhere (the asker was just promoted) it says nothing: that state
         * may still name the previous owner. A "yours" is also what the watch for silent owners
         * hears; an owner it decided to fail is answered "no".
         */
        private static Response answer(ClusterState state, Request request, SilentOwners silentOwners) {
            if (state.nodes().isLocalNodeElectedMaster() == false) {
                throw new NotMasterException("node [" + state.nodes().getLocalNodeId()
                        + "] is not the elected master; it cannot confirm lock partition ownership");
            }
            silentOwners.nodeAsked(request.owner);
            boolean behind = state.version() < request.stateVersion;
            Map<Integer, Boolean> owned = new HashMap<>();
            PartitionTable table = PartitionTable.of(state);
            for (Map.Entry<Integer, Long> e : request.epochs.entrySet()) {
                int p = e.getKey();
                boolean owner = table != null
                        && p < table.size()
                        && request.owner.equals(table.owner(p))
                        && table.epoch(p) == e.getValue();
                if (behind && owner == false) {
                    continue; // its older state may still name the previous owner: no answer
                }
                owned.put(p, owner && silentOwners.heard(p, e.getValue(), request.owner));
            }
            if (behind && owned.isEmpty() && request.epochs.isEmpty() == false) {
                throw new IllegalStateException("the master has applied cluster state version [" + state.version()
                        + "], older than the asker's [" + request.stateVersion + "]; ask again");
            }
            return new Response(owned);
        }
    }
}
