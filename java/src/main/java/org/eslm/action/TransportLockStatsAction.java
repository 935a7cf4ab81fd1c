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
import org.eslm.service.LockService;

/** Gathers lock statistics from every node's core ({@code cluster:monitor/locks/stats}). */
public final class TransportLockStatsAction
        extends LockNodesAction<LockStatsRequest, LockStatsResponse, WholeReportNodeRequest, NodeLockStatsResponse> {

    public static final ActionType<LockStatsResponse> TYPE = new ActionType<>(LockActionNames.STATS);

    @Inject
    public TransportLockStatsAction(TransportWiring wiring, LockService locks) {
        super(TYPE, wiring, WholeReportNodeRequest::new, ThreadPool.Names.MANAGEMENT, locks);
    }

    @Override
    protected LockStatsResponse newResponse(
            LockStatsRequest request, List<NodeLockStatsResponse> nodes, List<FailedNodeException> failures) {
        return new LockStatsResponse(clusterService.getClusterName(), nodes, failures);
    }

    @Override
    protected WholeReportNodeRequest newNodeRequest(LockStatsRequest request) {
        return new WholeReportNodeRequest();
    }

    @Override
    protected NodeLockStatsResponse newNodeResponse(StreamInput in, DiscoveryNode node) throws IOException {
        return new NodeLockStatsResponse(in, node);
    }

    @Override
    protected NodeLockStatsResponse nodeOperation(WholeReportNodeRequest request, Task task) {
        return new NodeLockStatsResponse(
                clusterService.localNode(), locks.reports().stats());
    }
}
