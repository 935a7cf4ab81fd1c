package org.eslm.cluster;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.common.component.LifecycleListener;
import org.elasticsearch.http.HttpServerTransport;
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

    /**
     * Forwards the request to the previous owner, which hands its partition over. Also where this
     * node learns that it begins to shut down, when it hands all its partitions over.
     */
    public static final class Transport extends PartitionNodeAction<PartitionStateResponse> {
        private final PartitionManager partitions;

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
            super(TYPE, wiring, PartitionStateResponse::new);
            this.partitions = partitions;
            http.addLifecycleListener(new LifecycleListener() {
                @Override
                public void beforeStop() {
                    partitions.nodeStopping();
                }
            });
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
