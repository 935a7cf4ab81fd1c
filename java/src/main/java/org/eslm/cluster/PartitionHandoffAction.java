package org.eslm.cluster;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;

/**
 * {@code internal:locks/partition/handoff}: a node that became a partition's owner asks the
 * previous owner for the partition's state (holders, leases, sessions, token counter). The
 * previous owner stops serving the partition and answers its snapshot, or none if it has
 * nothing to hand over (then the new owner waits out the recovery grace).
 */
public final class PartitionHandoffAction {
    public static final ActionType<PartitionStateResponse> TYPE = new ActionType<>("internal:locks/partition/handoff");

    private PartitionHandoffAction() {}

    /** Asks node {@code from} (its id), the previous owner, for partition {@code partition}. */
    public static PartitionRequest request(String from, int partition) {
        return new PartitionRequest(from, partition);
    }

    /** Forwards the request to the previous owner, which hands its partition over. */
    public static final class Transport extends PartitionNodeAction<PartitionStateResponse> {
        private final PartitionManager partitions;

        @Inject
        public Transport(TransportWiring wiring, PartitionManager partitions) {
            super(TYPE, wiring, PartitionStateResponse::new);
            this.partitions = partitions;
        }

        @Override
        protected void runHere(int partition, ActionListener<PartitionStateResponse> listener) {
            ActionListener.completeWith(listener, () -> new PartitionStateResponse(partitions.handOver(partition)));
        }

        @Override
        protected void nodeGone(String node, ActionListener<PartitionStateResponse> listener) {
            listener.onResponse(new PartitionStateResponse((String) null)); // nothing to hand over
        }
    }
}
