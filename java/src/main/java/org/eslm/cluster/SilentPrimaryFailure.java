package org.eslm.cluster;

import java.util.ArrayList;
import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.ClusterStateTaskExecutor;
import org.elasticsearch.cluster.ClusterStateTaskListener;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexRoutingTable;
import org.elasticsearch.cluster.routing.IndexShardRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.cluster.routing.allocation.AllocationService;
import org.elasticsearch.cluster.routing.allocation.FailedShard;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.cluster.service.MasterServiceTaskQueue;
import org.elasticsearch.common.Priority;
import org.elasticsearch.index.shard.ShardId;
import org.eslm.compat.ProjectScope;
import org.eslm.service.PendingPromotions;

/**
 * How the master fails the primary of a silent owner ({@link SilentOwners}): as a task on this
 * master's own queue, never through Elasticsearch's shard-failed request (docs/ARCHITECTURE.md
 * "Silent owners").
 *
 * <p>Why not the shard-failed request: it waits for a master and goes again to the next one. A
 * master cut off from the cluster hears no owner and condemns every one; a shard-failed request
 * it sent then reaches the master elected in its place after the heal, which fails a live owner
 * that it has been hearing all along. A task here is this master's decision only: when this node
 * is no longer the elected master, or its publication fails, the task fails and nothing goes
 * again; the master in charge decides from what it hears.
 *
 * <p>The task fails the primary only if it is still the copy the decision was about: the same
 * allocation, active, in the same primary term (the epoch). A primary already failed over, or
 * moved, is left alone.
 */
public final class SilentPrimaryFailure {
    private static final Logger logger = LogManager.getLogger(SilentPrimaryFailure.class);

    private final MasterServiceTaskQueue<FailTask> queue;

    private final PendingPromotions promotions;

    /** Fails primaries through {@code allocation}; the promotions it publishes go to {@code promotions}. */
    public SilentPrimaryFailure(
            ClusterService clusterService, AllocationService allocation, PendingPromotions promotions) {
        this.promotions = promotions;
        // HIGH, as Elasticsearch's own shard-failed tasks: the partition is stopped until it runs.
        this.queue = clusterService.createTaskQueue(
                "lock-silent-primary", Priority.HIGH, new Executor(allocation, promotions));
    }

    /** Fails {@code primary} of {@code shardId} if it is still the primary in {@code epoch}; {@code why} is logged. */
    void fail(ShardId shardId, String allocationId, long epoch, String why) {
        queue.submitTask(why, new FailTask(shardId, allocationId, epoch, why, promotions), null);
    }

    /**
     * One decision of this master: fail the copy {@code allocationId} of {@code shardId}, primary
     * in {@code epoch}; a publication that fails drops the promotion it made from {@code promotions}.
     */
    record FailTask(ShardId shardId, String allocationId, long epoch, String why, PendingPromotions promotions)
            implements ClusterStateTaskListener {
        @Override
        public void onFailure(Exception e) {
            // Not retried: a master that lost its place decided on what it could no longer hear.
            promotions.dropped(shardId.id(), epoch + 1);
            logger.warn(
                    "lock partition [{}]: the silent owner's primary was not failed: {}", shardId.id(), e.toString());
        }
    }

    /** The primary {@code task} is about, if {@code state} still shows it active in the task's epoch; else null. */
    static ShardRouting stillPrimary(ClusterState state, FailTask task) {
        IndexMetadata index = ProjectScope.index(state, task.shardId().getIndexName());
        IndexRoutingTable routing = ProjectScope.routing(state, task.shardId().getIndexName());
        return index == null || routing == null
                ? null
                : stillPrimary(index, routing.shard(task.shardId().id()), task);
    }

    /** The same, over the lock index's metadata and the task's shard. */
    static ShardRouting stillPrimary(IndexMetadata index, IndexShardRoutingTable shard, FailTask task) {
        if (index.getIndexUUID().equals(task.shardId().getIndex().getUUID()) == false
                || index.primaryTerm(task.shardId().id()) != task.epoch()) {
            return null;
        }
        ShardRouting copy = shard.getByAllocationId(task.allocationId());
        return copy != null && copy.primary() && copy.active() ? copy : null;
    }

    private record Executor(AllocationService allocation, PendingPromotions promotions)
            implements ClusterStateTaskExecutor<FailTask> {
        @Override
        public ClusterState execute(BatchExecutionContext<FailTask> batch) {
            ClusterState state = batch.initialState();
            List<FailedShard> failed = new ArrayList<>();
            for (var context : batch.taskContexts()) {
                FailTask task = context.getTask();
                ShardRouting primary = stillPrimary(state, task);
                if (primary != null
                        && failed.stream().noneMatch(f -> f.routingEntry().equals(primary))) {
                    failed.add(new FailedShard(primary, task.why(), new ElasticsearchException(task.why()), true));
                    context.success(() -> logger.info(
                            "lock partition [{}]: the silent owner's primary was failed",
                            task.shardId().id()));
                } else {
                    context.success(() -> logger.info(
                            "lock partition [{}]: the silent owner's primary had already changed; nothing failed",
                            task.shardId().id()));
                }
            }
            if (failed.isEmpty()) {
                return state;
            }
            ClusterState next = allocation.applyFailedShards(state, failed, List.of());
            failed.forEach(f -> promoted(next, f.routingEntry().shardId()));
            return next;
        }

        /** Records the copy {@code next} makes the active primary of {@code shardId}, in its new term. */
        private void promoted(ClusterState next, ShardId shardId) {
            IndexMetadata index = ProjectScope.index(next, shardId.getIndexName());
            IndexRoutingTable routing = ProjectScope.routing(next, shardId.getIndexName());
            ShardRouting primary =
                    routing == null ? null : routing.shard(shardId.id()).primaryShard();
            if (index != null && primary != null && primary.active()) {
                promotions.decided(shardId.id(), primary.currentNodeId(), index.primaryTerm(shardId.id()));
            }
        }
    }
}
