package org.eslm.cluster;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.indices.IndicesService;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.service.LockService;

/**
 * A copy of this node becomes the partition's owner and opens from its standby table
 * (docs/ARCHITECTURE.md "Replication", "Silent owners"): under a primary operation permit of its
 * shard, which Elasticsearch grants only once the shard runs in the new term with every batch of
 * the previous primary done and any later one refused, so the table is final; and only once the
 * core's ownership protocol says the old owner's lease has surely ended — at once when the old
 * owner answered that it closed, else counted from this copy's last answer to it. A live old
 * owner is asked to close at the same time as that wait runs, so a frozen one costs no more than
 * its lease. Without the shard, the permit or the standby, the promotion falls back to the other
 * ways in; whichever way ends it, it ends once. A failover (the previous owner failed, left or
 * went silent, not a planned hand-over) that opens from the standby is counted in the lock
 * metrics ({@code es.locks.failovers.total}).
 */
final class PartitionPromotion {
    private static final Logger logger = LogManager.getLogger(PartitionPromotion.class);

    /**
     * One promotion of a partition: its epoch, whether it is a failover, its way out if the standby
     * cannot be used, once.
     */
    private record Attempt(long epoch, boolean failover, Runnable otherwise, AtomicBoolean ended) {}

    private final LockService locks;
    private final ClusterService clusterService;
    private final IndicesService indices;
    private final ThreadPool threadPool;
    private final PartitionOpening opening;
    private final PartitionHandover handover;
    private final Map<Integer, Attempt> attempts = new ConcurrentHashMap<>();

    PartitionPromotion(
            LockService locks,
            ClusterService clusterService,
            IndicesService indices,
            ThreadPool threadPool,
            PartitionOpening opening,
            PartitionHandover handover) {
        this.locks = locks;
        this.clusterService = clusterService;
        this.indices = indices;
        this.threadPool = threadPool;
        this.opening = opening;
        this.handover = handover;
    }

    /**
     * Opens {@code p} in {@code epoch} from this node's standby once the old owner's lease has
     * ended; {@code oldOwnerClosed} when it answered a hand-over (it serves no more); {@code
     * failover} when its previous owner failed, left or went silent (not a planned move, not this
     * node's restart). {@code otherwise} opens it another way when the standby cannot be used.
     */
    void promote(int p, long epoch, boolean oldOwnerClosed, boolean failover, Runnable otherwise) {
        Attempt attempt = new Attempt(epoch, failover, otherwise, new AtomicBoolean());
        attempts.put(p, attempt);
        tryOpen(p, attempt, oldOwnerClosed);
    }

    /**
     * As {@link #promote}, a failover with the old primary's node {@code previousOwner} still in
     * the cluster: it is asked to close while the wait runs, and its answer ends the wait.
     */
    void promoteAskingOldOwner(int p, long epoch, String previousOwner, Runnable otherwise) {
        promote(p, epoch, false, true, otherwise);
        handover.askToClose(p, epoch, previousOwner, () -> {
            Attempt attempt = attempts.get(p);
            if (attempt != null && attempt.epoch() == epoch) {
                tryOpen(p, attempt, true);
            }
        });
    }

    private void tryOpen(int p, Attempt attempt, boolean oldOwnerClosed) {
        if (attempt.ended().get()) {
            return;
        }
        IndexShard shard = LockShards.local(indices, clusterService.state(), p);
        if (shard == null) {
            fallBack(p, attempt);
            return;
        }
        shard.acquirePrimaryOperationPermit(
                ActionListener.wrap(
                        permit -> {
                            try (permit) {
                                openUnderPermit(p, attempt, shard, oldOwnerClosed);
                            }
                        },
                        e -> {
                            logger.warn(
                                    () -> "no primary permit for lock partition [" + p + "]; opening it otherwise", e);
                            fallBack(p, attempt);
                        }),
                threadPool.generic());
    }

    private void openUnderPermit(int p, Attempt attempt, IndexShard shard, boolean oldOwnerClosed) {
        if (attempt.ended().get() || attempts.get(p) != attempt) {
            return;
        }
        if (opening.stopping()) {
            end(p, attempt);
            opening.end(p);
            return;
        }
        if (shard.getOperationPrimaryTerm() != attempt.epoch()
                || locks.lifecycle().standbys().has(p) == false) {
            fallBack(p, attempt);
            return;
        }
        long waitMs = locks.lifecycle().standbys().promotionWaitMs(p, oldOwnerClosed);
        if (waitMs > 0) {
            threadPool.schedule(
                    () -> tryOpen(p, attempt, false), TimeValue.timeValueMillis(waitMs), threadPool.generic());
            return;
        }
        if (end(p, attempt)) {
            opening.openFromStandby(p, attempt.epoch());
            if (attempt.failover()) {
                locks.metrics().failedOver();
            }
        }
    }

    private void fallBack(int p, Attempt attempt) {
        if (end(p, attempt)) {
            attempt.otherwise().run();
        }
    }

    /** Ends {@code attempt}; whether this call ended it (no other way did first). */
    private boolean end(int p, Attempt attempt) {
        if (attempt.ended().compareAndSet(false, true) == false) {
            return false;
        }
        attempts.remove(p, attempt);
        return true;
    }
}
