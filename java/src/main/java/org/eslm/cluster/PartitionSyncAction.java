package org.eslm.cluster;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.service.LockService;

/**
 * {@code internal:locks/partition/sync}: a copy of a partition that is finishing its recovery
 * and has no standby table yet asks the partition's owner to send the whole state to its copies
 * now; the answer comes once that batch reached them (docs/ARCHITECTURE.md "Replication").
 */
public final class PartitionSyncAction {
    public static final ActionType<ActionResponse.Empty> TYPE = new ActionType<>("internal:locks/partition/sync");

    private PartitionSyncAction() {}

    /** Asks node {@code owner} (its id) to send partition {@code partition}'s whole state to its copies. */
    public static PartitionRequest request(String owner, int partition) {
        return new PartitionRequest(owner, partition);
    }

    /** Forwards the request to the owner, which sends the whole state to the partition's copies. */
    public static final class Transport extends PartitionNodeAction<ActionResponse.Empty> {
        private final LockService locks;

        @Inject
        public Transport(TransportWiring wiring, LockService locks) {
            super(TYPE, wiring, in -> ActionResponse.Empty.INSTANCE);
            this.locks = locks;
        }

        @Override
        protected void runHere(int partition, ActionListener<ActionResponse.Empty> listener) {
            locks.syncCopies(partition, listener.map(ignored -> ActionResponse.Empty.INSTANCE));
        }

        @Override
        protected void nodeGone(String node, ActionListener<ActionResponse.Empty> listener) {
            listener.onFailure(new IllegalStateException("node [" + node + "] left the cluster"));
        }
    }
}
