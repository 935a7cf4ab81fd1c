package org.eslm.action;

import java.io.IOException;
import java.util.List;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.FailedNodeException;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.cluster.TransportWiring;
import org.eslm.compat.NodeRequestBase;
import org.eslm.service.LockService;

/** Gathers lock statistics from every node's core ({@code cluster:monitor/locks/stats}). */
public final class TransportLockStatsAction
        extends LockNodesAction<
                LockStatsRequest, LockStatsResponse, TransportLockStatsAction.NodeRequest, NodeLockStatsResponse> {

    public static final ActionType<LockStatsResponse> TYPE = new ActionType<>(LockActionNames.STATS);

    @Inject
    public TransportLockStatsAction(TransportWiring wiring, LockService locks) {
        super(TYPE, wiring, NodeRequest::new, ThreadPool.Names.MANAGEMENT, locks);
    }

    @Override
    protected LockStatsResponse newResponse(
            LockStatsRequest request, List<NodeLockStatsResponse> nodes, List<FailedNodeException> failures) {
        return new LockStatsResponse(clusterService.getClusterName(), nodes, failures);
    }

    @Override
    protected NodeRequest newNodeRequest(LockStatsRequest request) {
        return new NodeRequest();
    }

    @Override
    protected NodeLockStatsResponse newNodeResponse(StreamInput in, DiscoveryNode node) throws IOException {
        return new NodeLockStatsResponse(in, node);
    }

    @Override
    protected NodeLockStatsResponse nodeOperation(NodeRequest request, Task task) {
        return new NodeLockStatsResponse(clusterService.localNode(), locks.stats());
    }

    /** The per-node request: nothing to say but "your stats, please". */
    public static final class NodeRequest extends NodeRequestBase {
        public NodeRequest() {}

        public NodeRequest(StreamInput in) throws IOException {
            super(in);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof NodeRequest;
        }

        @Override
        public int hashCode() {
            return NodeRequest.class.hashCode();
        }
    }
}
