package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ContextPreservingActionListener;
import org.elasticsearch.tasks.CancellableTask;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.cluster.WiredTransportAction;
import org.eslm.service.LockService;

/**
 * Base of the lock transport actions. Each subclass is one action name — {@code cluster:admin/locks/*}
 * for changes, {@code cluster:monitor/locks/*} for reads, {@code cluster:admin/lock_manager/*} for
 * force-release ({@link LockActionNames}) — so Elasticsearch's security privileges decide who may
 * lock, who may look and who may take locks from their holders, and each accepts only its own
 * bridge ops (a request cannot smuggle a force-release through a change or a read action).
 *
 * <p>Two roles, one action name: the <b>coordinating node</b> (request not yet routed) routes it
 * to its partition's owner ({@link PartitionRouter}); the <b>owner node</b> (request carries its
 * partition) runs it in the local core ({@link OwnerRun}). A node-local read runs here.
 * Nothing blocks: waits are listeners, retries are cluster-state observers or scheduled tasks.
 */
public abstract class TransportLockOpAction extends WiredTransportAction<LockOpRequest, LockOpResponse> {
    private final LockService locks;
    private final Set<NativeOp> ops;
    private final ThreadPool threadPool;
    private final OwnerRun owner;
    private final PartitionRouter router;

    protected TransportLockOpAction(
            ActionType<LockOpResponse> type, Set<NativeOp> ops, TransportWiring wiring, LockService locks) {
        super(type, wiring, LockOpRequest::new);
        this.locks = locks;
        this.ops = Set.copyOf(ops);
        this.threadPool = wiring.transportService().getThreadPool();
        this.owner = new OwnerRun(locks);
        this.router = new PartitionRouter(actionName, wiring, locks, owner);
    }

    @Override
    protected void doExecute(Task task, LockOpRequest request, ActionListener<LockOpResponse> callerListener) {
        // Answered in the caller's thread context, whatever thread completes the request (a
        // replicated change is answered by the thread that finished its batch, in the empty
        // context the batch was shipped in): the context carries the response headers that the
        // REST layer sends, such as `X-Elastic-Product`, which the official clients require.
        ActionListener<LockOpResponse> listener =
                ContextPreservingActionListener.wrapPreservingContext(callerListener, threadPool.getThreadContext());
        if (ops.contains(request.op()) == false) {
            listener.onFailure(
                    new IllegalArgumentException("action [" + actionName + "] does not run [" + request.op() + "]"));
            return;
        }
        if (request.routingValue() == null) {
            // node-local read
            locks.execute(
                    request.op(),
                    NativeLockCore.ALL_PARTITIONS,
                    request.args(),
                    task,
                    listener.map(LockOpResponse::new));
        } else if (request.partition() != LockOpRequest.UNROUTED) {
            owner.run(task, request, listener);
        } else {
            // Tracked until answered: when this node begins to shut down, the request is answered
            // 503 naming the node and its task cancelled, so a client waiting through this node
            // goes to another at once instead of holding the node's shutdown up
            // (docs/RELIABILITY.md "Stopping a node").
            ActionListener<LockOpResponse> tracked = locks.shutdown().track(listener, () -> cancel(task));
            if (tracked == null) {
                return; // this node is shutting down: answered already
            }
            router.route(task, request, tracked);
        }
    }

    /**
     * Cancels {@code task} and its child requests on other nodes (a waiter queued at another
     * owner is dropped there, or its grant given back), without waiting for them.
     */
    private void cancel(Task task) {
        if (task instanceof CancellableTask cancellable) {
            wiring.transportService()
                    .getTaskManager()
                    .cancelTaskAndDescendants(cancellable, "node is shutting down", false, ActionListener.noop());
        }
    }
}
