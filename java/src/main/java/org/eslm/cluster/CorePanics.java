package org.eslm.cluster;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.indices.IndicesService;

/**
 * What this node does when the core panicked in a partition (docs/RELIABILITY.md "A panic in the
 * core"): its table may be inconsistent, so it is closed without keeping its state for anyone, and
 * this node's copy of its shard is failed. Elasticsearch promotes a replica, whose standby holds
 * every committed change, or — with no other copy — recovers this copy from its persisted batches;
 * either way in a higher primary term, so the partition reopens with its holders and its new
 * tokens are above every earlier one. Once per partition and epoch (every call the failed
 * partition refuses reports the same panic).
 */
final class CorePanics {
    private static final Logger logger = LogManager.getLogger(CorePanics.class);

    private final ClusterService clusterService;
    private final IndicesService indices;
    private final PartitionOwnership ownership;
    private final PartitionOpening opening;
    private final PartitionHandover handover;
    /** The epoch of the last panic handled per partition. */
    private final Map<Integer, Long> panicked = new ConcurrentHashMap<>();

    CorePanics(
            ClusterService clusterService,
            IndicesService indices,
            PartitionOwnership ownership,
            PartitionOpening opening,
            PartitionHandover handover) {
        this.clusterService = clusterService;
        this.indices = indices;
        this.ownership = ownership;
        this.opening = opening;
        this.handover = handover;
    }

    /** The core panicked in partition {@code p}, served in {@code epoch}. */
    void panicked(int p, long epoch) {
        if (p < 0 || epoch < 0 || Long.valueOf(epoch).equals(panicked.put(p, epoch))) {
            return;
        }
        logger.error("the lock core panicked in lock partition [{}] in epoch [{}]; reopening it", p, epoch);
        handover.discard(p, () -> {
            if (Long.valueOf(epoch).equals(ownership.epochs().get(p))) {
                opening.closePartition(p, false);
            }
        });
        IndexShard shard = LockShards.local(indices, clusterService.state(), p);
        if (shard == null || shard.routingEntry().primary() == false || shard.getOperationPrimaryTerm() > epoch) {
            logger.info(
                    "lock partition [{}]: no primary copy here in epoch [{}] to fail; the cluster decides", p, epoch);
            return;
        }
        String why = "the lock core panicked in lock partition [" + p + "] in epoch [" + epoch
                + "]; failing its shard so that it reopens from its replicated state in a higher term";
        shard.failShard(why, new IllegalStateException(why));
    }
}
