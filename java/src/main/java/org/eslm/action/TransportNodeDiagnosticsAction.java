package org.eslm.action;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.action.support.HandledTransportAction;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.util.concurrent.EsExecutors;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.transport.TransportService;
import org.eslm.plugin.BuildInfo;
import org.eslm.service.LockService;

/** Node-local diagnostics: build info from Java, everything else from the core. */
public final class TransportNodeDiagnosticsAction extends HandledTransportAction<NodeDiagnosticsRequest, NodeDiagnosticsResponse> {
    public static final ActionType<NodeDiagnosticsResponse> TYPE = new ActionType<>("cluster:monitor/locks/node/diagnostics");

    private final LockService locks;
    private final ClusterService clusterService;
    private final BuildInfo buildInfo;

    @Inject
    public TransportNodeDiagnosticsAction(
        TransportService transportService,
        ActionFilters actionFilters,
        LockService locks,
        ClusterService clusterService,
        BuildInfo buildInfo
    ) {
        super(TYPE.name(), transportService, actionFilters, NodeDiagnosticsRequest::new, EsExecutors.DIRECT_EXECUTOR_SERVICE);
        this.locks = locks;
        this.clusterService = clusterService;
        this.buildInfo = buildInfo;
    }

    @Override
    protected void doExecute(Task task, NodeDiagnosticsRequest request, ActionListener<NodeDiagnosticsResponse> listener) {
        ActionListener.completeWith(listener, () -> {
            DiscoveryNode node = clusterService.localNode();
            return new NodeDiagnosticsResponse(node.getId(), node.getName(), buildInfo.asMap(), locks.diagnostics());
        });
    }
}
