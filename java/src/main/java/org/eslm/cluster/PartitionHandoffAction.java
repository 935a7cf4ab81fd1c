package org.eslm.cluster;

import java.util.OptionalLong;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.common.component.LifecycleListener;
import org.elasticsearch.http.HttpServerTransport;
import org.elasticsearch.injection.guice.Inject;

/**
 * {@code internal:locks/partition/handoff}: a node that became a partition's owner asks the
 * previous owner for the partition's state (holders, leases, sessions, token counter). The
 * previous owner stops serving the partition and answers its snapshot, or none if it has
 * nothing to hand over (then the new owner waits out the recovery grace).
 *
 * <p>{@link #IN_EPOCH} is the same request with the asker's epoch of the partition: a node that
 * has served the partition in a newer epoch refuses it instead of closing (the core decides,
 * {@code lock_core::ownership::Ownership::hand_over_asked}). Such a request comes from an
 * ownership a later failover ended, delivered late by a connection that broke during a cut
 * (docs/RELIABILITY.md "Figures"). An asker sends it to the nodes that announce {@link
 * PeerFormats#HANDOFF_EPOCHS_ATTRIBUTE}, and the older form to the others (a rolling upgrade).
 */
public final class PartitionHandoffAction {
    public static final ActionType<PartitionStateResponse> TYPE = new ActionType<>("internal:locks/partition/handoff");
    public static final ActionType<PartitionStateResponse> IN_EPOCH =
            new ActionType<>("internal:locks/partition/handoff_in_epoch");

    private PartitionHandoffAction() {}

    /**
     * Asks node {@code from} (its id), the previous owner, for {@code partition}, as its owner in
     * {@code epoch}: in the form with the epoch where {@code from} reads it.
     */
    static void send(
            Client client,
            DiscoveryNodes nodes,
            String from,
            int partition,
            long epoch,
            ActionListener<PartitionStateResponse> listener) {
        DiscoveryNode node = nodes.get(from);
        if (node != null && PeerFormats.handOffEpochs(node)) {
            client.execute(IN_EPOCH, new PartitionRequest(from, partition, epoch), listener);
        } else {
            client.execute(TYPE, new PartitionRequest(from, partition), listener);
        }
    }

    /** The previous owner's side of either form: it hands its partition over, or refuses. */
    abstract static class HandsOver extends PartitionNodeAction<PartitionStateResponse> {
        private final PartitionManager partitions;

        HandsOver(ActionType<PartitionStateResponse> type, TransportWiring wiring, PartitionManager partitions) {
            super(
                    type,
                    wiring,
                    type == IN_EPOCH ? PartitionRequest::readWithEpoch : PartitionRequest::new,
                    PartitionStateResponse::new);
            this.partitions = partitions;
        }

        @Override
        protected void runHere(PartitionRequest request, ActionListener<PartitionStateResponse> listener) {
            OptionalLong epoch =
                    request.epoch == PartitionRequest.NO_EPOCH ? OptionalLong.empty() : OptionalLong.of(request.epoch);
            ActionListener.completeWith(
                    listener, () -> new PartitionStateResponse(partitions.handOver(request.partition, epoch)));
        }

        @Override
        protected void nodeGone(String node, ActionListener<PartitionStateResponse> listener) {
            listener.onResponse(new PartitionStateResponse((String) null)); // nothing to hand over
        }
    }

    /**
     * Forwards the request to the previous owner, which hands its partition over. Also where this
     * node learns that it begins to shut down, when it hands all its partitions over.
     */
    public static final class Transport extends HandsOver {
        /**
         * {@code http} is the node's HTTP server, injected because no plugin interface tells of a
         * shutdown early enough: on SIGTERM Elasticsearch's {@code Node.prepareForClose} (8.19 and
         * 9.x alike) first stops the HTTP server, which waits — by default for as long as it takes
         * ({@code http.shutdown_grace_period: 0ms}) — for every open HTTP request, and only then
         * closes the node and its plugins. A queued acquire or a watch would hold that wait up to
         * {@code locks.wait.max}. The server's {@code beforeStop} runs before that wait, on the
         * shutdown's own thread (docs/RELIABILITY.md "Stopping a node").
         */
        @Inject
        public Transport(TransportWiring wiring, PartitionManager partitions, HttpServerTransport http) {
            super(TYPE, wiring, partitions);
            http.addLifecycleListener(new LifecycleListener() {
                @Override
                public void beforeStop() {
                    partitions.nodeStopping();
                }
            });
        }
    }

    /** {@link #IN_EPOCH}: forwards the request with the asker's epoch to the previous owner. */
    public static final class InEpoch extends HandsOver {
        @Inject
        public InEpoch(TransportWiring wiring, PartitionManager partitions) {
            super(IN_EPOCH, wiring, partitions);
        }
    }
}
