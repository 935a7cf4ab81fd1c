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

/**
 * Gathers every node's diagnostics ({@code cluster:monitor/locks/diagnostics}): one call for what
 * {@code GET /_locks/_node/diagnostics} shows node by node. A node that does not answer is listed
 * with its failure in the answer's {@code _nodes.failures}, never left out silently.
 */
public final class TransportLockDiagnosticsAction
        extends LockNodesAction<
                LockDiagnosticsRequest, LockDiagnosticsResponse, WholeReportNodeRequest, NodeLockDiagnosticsResponse> {

    public static final ActionType<LockDiagnosticsResponse> TYPE = new ActionType<>(LockActionNames.DIAGNOSTICS);

    @Inject
    public TransportLockDiagnosticsAction(TransportWiring wiring, LockService locks) {
        super(TYPE, wiring, WholeReportNodeRequest::new, ThreadPool.Names.MANAGEMENT, locks);
    }

    @Override
    protected LockDiagnosticsResponse newResponse(
            LockDiagnosticsRequest request,
            List<NodeLockDiagnosticsResponse> nodes,
            List<FailedNodeException> failures) {
        return new LockDiagnosticsResponse(clusterService.getClusterName(), nodes, failures);
    }

    @Override
    protected WholeReportNodeRequest newNodeRequest(LockDiagnosticsRequest request) {
        return new WholeReportNodeRequest();
    }

    @Override
    protected NodeLockDiagnosticsResponse newNodeResponse(StreamInput in, DiscoveryNode node) throws IOException {
        return new NodeLockDiagnosticsResponse(in, node);
    }

    @Override
    protected NodeLockDiagnosticsResponse nodeOperation(WholeReportNodeRequest request, Task task) {
        return new NodeLockDiagnosticsResponse(
                clusterService.localNode(), locks.reports().diagnostics());
    }
}
