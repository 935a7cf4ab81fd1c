package org.eslm.cluster;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.transport.TransportRequestOptions;
import org.eslm.service.LockService;

/**
 * {@code internal:locks/partition/state}: a copy of a partition that holds no standby table yet
 * (it is recovering) or missed a batch asks the partition's owner for its live state, and installs
 * it before it acknowledges anything (docs/ARCHITECTURE.md "Replication"). The state is read
 * straight from the owner's table, outside the batch stream, so the owner's batch in flight — the
 * very one the copy could not apply — does not have to finish first. It is fuzzy: it holds every
 * change the owner made up to the moment it was read, under the {@code seq} of the owner's last
 * batch; the batches after that seq apply on top of it (they upsert and remove by identity).
 */
public final class PartitionStateAction {
    public static final ActionType<PartitionStateResponse> TYPE = new ActionType<>("internal:locks/partition/state");

    /**
     * How long one ask waits for the owner. After a network partition heals, a transport
     * connection that carried traffic during the cut is still in TCP's retransmission backoff and
     * stays silent for up to ~12 s more (seen in the nemesis test); the ask times out and the
     * copy asks again ({@link LockShardListener#STANDBY_RETRY}), on the next connection of the
     * pool, rather than holding the copy's recovery until that backoff ends.
     */
    static final TimeValue ASK_TIMEOUT = TimeValue.timeValueSeconds(3);

    private PartitionStateAction() {}

    /** Asks node {@code owner} (its id) for the live state of partition {@code partition}. */
    public static PartitionRequest request(String owner, int partition) {
        return new PartitionRequest(owner, partition);
    }

    /** Forwards the request to the owner, which reads its live state. */
    public static final class Transport extends PartitionNodeAction<PartitionStateResponse> {
        private final LockService locks;

        @Inject
        public Transport(TransportWiring wiring, LockService locks) {
            super(TYPE, wiring, PartitionStateResponse::new);
            this.locks = locks;
        }

        @Override
        protected void runHere(PartitionRequest request, ActionListener<PartitionStateResponse> listener) {
            ActionListener.completeWith(
                    listener, () -> new PartitionStateResponse(locks.lifecycle().liveState(request.partition)));
        }

        @Override
        protected TransportRequestOptions options() {
            return TransportRequestOptions.timeout(ASK_TIMEOUT);
        }

        @Override
        protected void nodeGone(String node, ActionListener<PartitionStateResponse> listener) {
            listener.onFailure(new IllegalStateException("node [" + node + "] left the cluster"));
        }
    }
}
