package org.eslm.cluster;

import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.routing.RecoverySource;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.index.IndexSettings;
import org.elasticsearch.index.shard.IndexEventListener;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.index.shard.ShardId;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.service.LockService;

/**
 * The lock index's shard events on this node, with {@code locks.durability: replicated}
 * (docs/ARCHITECTURE.md "Replication"):
 * <ul>
 *   <li>a copy recovering from its own folder (a restarted node) rebuilds its standby table from
 *   the persisted batches, so the partition reopens with its holders and without grace;</li>
 *   <li>a copy recovering from another copy forgets any old log and standby of its own;</li>
 *   <li>a replica does not finish recovering (and so cannot become in-sync, nor be promoted)
 *   before it holds the primary's whole state;</li>
 *   <li>a copy leaving the node closes its log and drops its standby.</li>
 * </ul>
 */
public final class LockShardListener implements IndexEventListener {
    private static final Logger logger = LogManager.getLogger(LockShardListener.class);
    /** How long a recovering replica waits for the whole state before its recovery fails (and is retried). */
    static final TimeValue STANDBY_WAIT = TimeValue.timeValueSeconds(30);

    static final TimeValue STANDBY_RETRY = TimeValue.timeValueMillis(200);

    private final LockService locks;
    private final ShardStateLog log;
    private final ClusterService clusterService;
    private final Client client;
    private final ThreadPool threadPool;

    public LockShardListener(
            LockService locks, ShardStateLog log, ClusterService clusterService, Client client, ThreadPool threadPool) {
        this.locks = locks;
        this.log = log;
        this.clusterService = clusterService;
        this.client = client;
        this.threadPool = threadPool;
    }

    @Override
    public void beforeIndexShardRecovery(IndexShard shard, IndexSettings settings, ActionListener<Void> listener) {
        if (locks.replicated() == false) {
            listener.onResponse(null);
            return;
        }
        ActionListener.run(listener, l -> {
            int partition = shard.shardId().id();
            RecoverySource source = shard.routingEntry().recoverySource();
            if (source != null && source.getType() == RecoverySource.Type.EXISTING_STORE) {
                restore(shard, partition);
            } else {
                log.delete(shard);
                locks.standbys().drop(partition);
            }
            l.onResponse(null);
        });
    }

    /** Rebuilds the standby of {@code partition} from its persisted batches (a node restart). */
    private void restore(IndexShard shard, int partition) {
        locks.standbys().drop(partition);
        List<String> batches = log.read(shard);
        int applied = 0;
        for (String batch : batches) {
            try {
                applied += locks.standbys().apply(partition, batch) ? 1 : 0;
            } catch (IllegalArgumentException e) {
                logger.warn(
                        "lock partition [{}]: persisted batch {} of {} does not follow; restored up to it: {}",
                        partition,
                        applied + 1,
                        batches.size(),
                        e.getMessage());
                break;
            }
        }
        logger.info(
                "lock partition [{}]: restored {} persisted batches from {}",
                partition,
                applied,
                ShardStateLog.file(shard));
    }

    @Override
    public void afterIndexShardRecovery(IndexShard shard, ActionListener<Void> listener) {
        if (locks.replicated() == false || shard.routingEntry().primary()) {
            listener.onResponse(null);
            return;
        }
        awaitStandby(shard.shardId().id(), System.nanoTime() + STANDBY_WAIT.nanos(), listener);
    }

    /** Completes {@code listener} once this node has a standby of {@code partition}, asking its owner for it. */
    private void awaitStandby(int partition, long deadlineNanos, ActionListener<Void> listener) {
        if (locks.standbys().has(partition)) {
            listener.onResponse(null);
            return;
        }
        if (System.nanoTime() - deadlineNanos > 0) {
            listener.onFailure(new ElasticsearchException(
                    "lock partition [{}]: no whole state from its primary within {}; recovery will be retried",
                    partition,
                    STANDBY_WAIT));
            return;
        }
        PartitionTable table = PartitionTable.of(clusterService.state());
        String owner = table == null || partition >= table.size() ? null : table.owner(partition);
        Runnable again = () -> threadPool.schedule(
                () -> awaitStandby(partition, deadlineNanos, listener), STANDBY_RETRY, threadPool.generic());
        if (owner == null) {
            again.run();
            return;
        }
        client.execute(
                PartitionSyncAction.TYPE,
                PartitionSyncAction.request(owner, partition),
                ActionListener.wrap(
                        r -> {
                            if (locks.standbys().has(partition)) {
                                listener.onResponse(null);
                            } else {
                                again.run();
                            }
                        },
                        e -> {
                            logger.debug(
                                    "lock partition [{}]: asking the owner for the whole state failed: {}",
                                    partition,
                                    e.getMessage());
                            again.run();
                        }));
    }

    @Override
    public void beforeIndexShardClosed(ShardId shardId, IndexShard shard, Settings settings) {
        log.close(shardId);
        if (locks.replicated()) {
            locks.standbys().drop(shardId.id());
        }
    }
}
