package org.eslm.replication;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionRunnable;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.cluster.PartitionStateAction;
import org.eslm.cluster.PartitionTable;
import org.eslm.service.LockService;

/**
 * A copy of a partition that has no standby table yet (it is recovering) or missed a batch
 * catches up from the partition's owner (docs/ARCHITECTURE.md "Replication"): it fetches the
 * owner's live state ({@link PartitionStateAction}), installs it unless its standby is already as
 * new, and persists it as its state log's checkpoint. Used before a copy finishes recovering and
 * before a copy answers a batch it could not apply, so that a copy never acknowledges a change it
 * does not hold.
 */
public final class CopyCatchUp {
    private final LockService locks;
    private final ShardStateLog log;
    private final ClusterService clusterService;
    private final Client client;
    private final ThreadPool threadPool;

    public CopyCatchUp(
            LockService locks, ShardStateLog log, ClusterService clusterService, Client client, ThreadPool threadPool) {
        this.locks = locks;
        this.log = log;
        this.clusterService = clusterService;
        this.client = client;
        this.threadPool = threadPool;
    }

    /**
     * Catches {@code shard}'s copy up with its owner; answers whether this node now has a standby
     * of the partition (false: no owner to ask, or it does not serve the partition now). Fails when
     * the owner cannot be reached.
     */
    void run(IndexShard shard, ActionListener<Boolean> listener) {
        int partition = shard.shardId().id();
        PartitionTable table = PartitionTable.of(clusterService.state());
        String owner = table == null || partition >= table.size() ? null : table.owner(partition);
        if (owner == null || owner.equals(clusterService.localNode().getId())) {
            listener.onResponse(false);
            return;
        }
        client.execute(
                PartitionStateAction.TYPE,
                PartitionStateAction.request(owner, partition),
                listener.delegateFailureAndWrap((l, response) -> threadPool
                        .executor(LockReplicationAction.EXECUTOR)
                        .execute(ActionRunnable.supply(l, () -> install(shard, partition, response.stateJson())))));
    }

    /** Installs a fetched state and persists the standby as the log's checkpoint (an fsync: not on a transport thread). */
    private boolean install(IndexShard shard, int partition, String stateJson) throws java.io.IOException {
        if (stateJson == null || locks.lifecycle().standbys().catchUp(partition, stateJson) == false) {
            return false;
        }
        String whole = locks.lifecycle().wholeState(partition);
        if (whole != null) {
            log.checkpoint(shard, whole);
        }
        return true;
    }
}
