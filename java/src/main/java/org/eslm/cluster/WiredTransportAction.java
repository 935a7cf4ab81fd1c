package org.eslm.cluster;

import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.HandledTransportAction;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.io.stream.Writeable;
import org.elasticsearch.common.util.concurrent.EsExecutors;

/**
 * Base of the plugin's transport actions that run one request (the lock ops, the hand-over, the
 * ownership check): built from {@link TransportWiring}, which also sends them on to other nodes,
 * and run on the thread that received them, since they never block (waits are listeners).
 */
public abstract class WiredTransportAction<Req extends ActionRequest, Resp extends ActionResponse>
        extends HandledTransportAction<Req, Resp> {
    protected final TransportWiring wiring;
    protected final ClusterService clusterService;

    protected WiredTransportAction(ActionType<Resp> type, TransportWiring wiring, Writeable.Reader<Req> reader) {
        super(
                type.name(),
                wiring.transportService(),
                wiring.actionFilters(),
                reader,
                EsExecutors.DIRECT_EXECUTOR_SERVICE);
        this.wiring = wiring;
        this.clusterService = wiring.clusterService();
    }
}
