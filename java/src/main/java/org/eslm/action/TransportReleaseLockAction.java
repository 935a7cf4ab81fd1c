package org.eslm.action;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.action.support.HandledTransportAction;
import org.elasticsearch.common.util.concurrent.EsExecutors;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.transport.TransportService;
import org.eslm.service.LockService;

/** Releases a lock held in this node's core. */
public final class TransportReleaseLockAction extends HandledTransportAction<ReleaseLockRequest, ReleaseLockResponse> {
    public static final ActionType<ReleaseLockResponse> TYPE = new ActionType<>("cluster:admin/locks/release");

    private final LockService locks;

    @Inject
    public TransportReleaseLockAction(TransportService transportService, ActionFilters actionFilters, LockService locks) {
        super(TYPE.name(), transportService, actionFilters, ReleaseLockRequest::new, EsExecutors.DIRECT_EXECUTOR_SERVICE);
        this.locks = locks;
    }

    @Override
    protected void doExecute(Task task, ReleaseLockRequest request, ActionListener<ReleaseLockResponse> listener) {
        ActionListener.completeWith(
            listener,
            () -> ReleaseLockResponse.fromNative(locks.release(request.key(), request.owner(), request.fencingToken()))
        );
    }
}
