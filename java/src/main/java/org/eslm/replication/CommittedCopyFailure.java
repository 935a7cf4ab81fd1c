package org.eslm.replication;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.ClusterStateObserver;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.util.concurrent.ThreadContext;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.index.shard.ShardId;
import org.eslm.compat.ProjectScope;

/**
 * Lets a batch go on once the failure of a copy that did not take it is committed, without
 * waiting for the master's answer (docs/ARCHITECTURE.md "Replication").
 *
 * <p>The master answers a shard-failed request only when its publication is over: every node
 * applied the new cluster state, or {@code cluster.publish.timeout} (30 s) ran out. A frozen or
 * cut-off node holding the copy never applies it, so the owner's batch, and every lock of the
 * partition, would wait those 30 s. What makes going on safe is not the answer but the commit: a
 * cluster state this node applied is committed (a majority accepted it), and once one in which
 * this primary still serves in the same term lists the copy out of the in-sync set, no master can
 * promote that copy. The master's answer still arrives and is ignored (or, when it comes first,
 * decides as before).
 */
final class CommittedCopyFailure {
    private static final Logger logger = LogManager.getLogger(CommittedCopyFailure.class);
    /** How long the applied cluster states are watched; the master's answer decides after it. */
    static final TimeValue WATCH = TimeValue.timeValueMinutes(2);

    private CommittedCopyFailure() {}

    /**
     * Whether {@code state} has the primary of {@code shard} in {@code primaryTerm} still (a new
     * primary always comes with a higher term) and the copy {@code allocationId} out of its
     * in-sync set.
     */
    static boolean committed(ClusterState state, ShardId shard, String allocationId, long primaryTerm) {
        IndexMetadata index = ProjectScope.index(state, shard.getIndexName());
        return index != null
                && index.getIndexUUID().equals(shard.getIndex().getUUID())
                && index.primaryTerm(shard.id()) == primaryTerm
                && index.inSyncAllocationIds(shard.id()).contains(allocationId) == false;
    }

    /**
     * The listener to give the shard-failed request: it completes {@code listener} once, with the
     * master's answer or as soon as this node applied a cluster state in which the copy's failure
     * is {@link #committed}, whichever comes first. The latter runs on {@code executor}, never on
     * the cluster applier's thread; after the former, the watch ends at the next cluster state.
     * When the state this node applied already shows the failure committed, {@code listener}
     * completes at once and the master's answer is ignored.
     */
    static ActionListener<Void> orWhenCommitted(
            ClusterService clusterService,
            ThreadContext threadContext,
            Executor executor,
            ShardId shard,
            String allocationId,
            long primaryTerm,
            ActionListener<Void> listener) {
        if (committed(clusterService.state(), shard, allocationId, primaryTerm)) {
            // Already out in the state this node applied (failed before this batch gave up on it):
            // the observer below would wait for a next state, which a master publishing to a silent
            // node may not send for 30 s.
            logger.info("copy [{}] of {} was already out of the in-sync set: the batch goes on", allocationId, shard);
            goOn(executor, listener);
            return ActionListener.noop();
        }
        AtomicBoolean done = new AtomicBoolean();
        ClusterStateObserver observer = new ClusterStateObserver(clusterService, WATCH, logger, threadContext);
        observer.waitForNextChange(
                new ClusterStateObserver.Listener() {
                    @Override
                    public void onNewClusterState(ClusterState state) {
                        if (done.compareAndSet(false, true)) {
                            logger.info(
                                    "copy [{}] of {} is out of the in-sync set in a committed cluster state: the "
                                            + "batch goes on without waiting for the master's answer",
                                    allocationId,
                                    shard);
                            goOn(executor, listener);
                        }
                    }

                    @Override
                    public void onClusterServiceClose() {}

                    @Override
                    public void onTimeout(TimeValue timeout) {}
                },
                state -> done.get() || committed(state, shard, allocationId, primaryTerm));
        return ActionListener.wrap(
                answer -> {
                    if (done.compareAndSet(false, true)) {
                        listener.onResponse(answer);
                    }
                },
                failure -> {
                    if (done.compareAndSet(false, true)) {
                        listener.onFailure(failure);
                    }
                });
    }

    /** Off the applier's thread; inline only when the pool refuses (it is shutting down). */
    private static void goOn(Executor executor, ActionListener<Void> listener) {
        try {
            executor.execute(() -> listener.onResponse(null));
        } catch (RejectedExecutionException e) {
            listener.onResponse(null);
        }
    }
}
