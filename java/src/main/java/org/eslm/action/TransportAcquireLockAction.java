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

/**
 * Acquires a lock in this node's core. Runs on the calling thread: the core answers in
 * microseconds and never waits, so no executor hop is needed.
 */
public final class TransportAcquireLockAction extends HandledTransportAction<AcquireLockRequest, AcquireLockResponse> {
    public static final ActionType<AcquireLockResponse> TYPE = new ActionType<>("cluster:admin/locks/acquire");

    private final LockService locks;

    @Inject
    public TransportAcquireLockAction(TransportService transportService, ActionFilters actionFilters, LockService locks) {
        super(TYPE.name(), transportService, actionFilters, AcquireLockRequest::new, EsExecutors.DIRECT_EXECUTOR_SERVICE);
        this.locks = locks;
    }

    @Override
    protected void doExecute(Task task, AcquireLockRequest request, ActionListener<AcquireLockResponse> listener) {
        ActionListener.completeWith(
            listener,
            () -> AcquireLockResponse.fromNative(locks.acquire(request.key(), request.owner(), request.mode()))
        );
    }
}
