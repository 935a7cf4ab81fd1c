package org.eslm.action;

import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.nodes.BaseNodeResponse;
import org.elasticsearch.action.support.nodes.BaseNodesResponse;
import org.elasticsearch.action.support.nodes.TransportNodesAction;
import org.elasticsearch.common.io.stream.Writeable;
import org.elasticsearch.transport.TransportRequest;
import org.eslm.cluster.TransportWiring;
import org.eslm.compat.NodesRequestBase;
import org.eslm.service.LockService;

/**
 * Base of the nodes actions that ask every node's lock service (the list and the stats): each
 * node answers from its own core, on a pool that is not the lock path's (these are monitoring
 * reads): the stats on the management pool, the list on a pool of its own.
 */
abstract class LockNodesAction<
                NodesRequest extends NodesRequestBase<NodesRequest>,
                NodesResponse extends BaseNodesResponse<?>,
                NodeRequest extends TransportRequest,
                NodeResponse extends BaseNodeResponse>
        extends TransportNodesAction<NodesRequest, NodesResponse, NodeRequest, NodeResponse, Void> {
    protected final LockService locks;

    LockNodesAction(
            ActionType<NodesResponse> type,
            TransportWiring wiring,
            Writeable.Reader<NodeRequest> nodeRequestReader,
            String executor,
            LockService locks) {
        super(
                type.name(),
                wiring.clusterService(),
                wiring.transportService(),
                wiring.actionFilters(),
                nodeRequestReader,
                wiring.transportService().getThreadPool().executor(executor));
        this.locks = locks;
    }
}
