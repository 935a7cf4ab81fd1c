package org.eslm.action;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.action.support.HandledTransportAction;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.util.concurrent.EsExecutors;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.transport.TransportService;
import org.eslm.service.LockService;

/** Reads the holders of one key from this node's core. */
public final class TransportGetLockAction extends HandledTransportAction<GetLockRequest, GetLockResponse> {
    public static final ActionType<GetLockResponse> TYPE = new ActionType<>("cluster:monitor/locks/get");

    private final LockService locks;
    private final ClusterService clusterService;

    @Inject
    public TransportGetLockAction(
        TransportService transportService,
        ActionFilters actionFilters,
        LockService locks,
        ClusterService clusterService
    ) {
        super(TYPE.name(), transportService, actionFilters, GetLockRequest::new, EsExecutors.DIRECT_EXECUTOR_SERVICE);
        this.locks = locks;
        this.clusterService = clusterService;
    }

    @Override
    protected void doExecute(Task task, GetLockRequest request, ActionListener<GetLockResponse> listener) {
        ActionListener.completeWith(
            listener,
            () -> GetLockResponse.fromNative(locks.keyInfo(request.key()), clusterService.localNode().getName())
        );
    }
}
