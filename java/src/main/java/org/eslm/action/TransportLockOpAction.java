package org.eslm.action;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.action.support.HandledTransportAction;
import org.elasticsearch.common.util.concurrent.EsExecutors;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.transport.TransportService;
import org.eslm.bridge.NativeOp;
import org.eslm.service.LockService;

import java.util.Set;

/**
 * Base of the lock transport actions. Each subclass is one action name — {@code cluster:admin/locks/*}
 * for changes, {@code cluster:monitor/locks/*} for reads — so Elasticsearch's security privileges
 * decide who may lock and who may look, and each accepts only its own bridge ops (a request
 * cannot smuggle a force-release through a read action).
 *
 * <p>Runs on the calling thread: the core answers in microseconds and never blocks; a request
 * that has to wait is completed later from the core's events.
 */
public abstract class TransportLockOpAction extends HandledTransportAction<LockOpRequest, LockOpResponse> {
    private final LockService locks;
    private final Set<NativeOp> ops;

    protected TransportLockOpAction(
        ActionType<LockOpResponse> type,
        Set<NativeOp> ops,
        TransportService transportService,
        ActionFilters actionFilters,
        LockService locks
    ) {
        super(type.name(), transportService, actionFilters, LockOpRequest::new, EsExecutors.DIRECT_EXECUTOR_SERVICE);
        this.locks = locks;
        this.ops = Set.copyOf(ops);
    }

    @Override
    protected void doExecute(Task task, LockOpRequest request, ActionListener<LockOpResponse> listener) {
        if (ops.contains(request.op()) == false) {
            listener.onFailure(new IllegalArgumentException("action [" + actionName + "] does not run [" + request.op() + "]"));
            return;
        }
        locks.execute(request, task, listener.map(LockOpResponse::new));
    }
}
