package org.eslm.replication;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.cluster.routing.RecoverySource;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.index.IndexSettings;
import org.elasticsearch.index.shard.IndexEventListener;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.index.shard.ShardId;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.cluster.LockIndex;
import org.eslm.cluster.PartitionTable;
import org.eslm.service.LockService;

/**
 * The lock index's shard events on this node, with {@code locks.durability: replicated}
 * (docs/ARCHITECTURE.md "Replication"):
 * <ul>
 *   <li>a copy recovering from its own folder (a restarted node) rebuilds its standby table from
 *   the persisted batches, so the partition reopens with its holders and without grace;</li>
 *   <li>a copy recovering from another copy forgets any old log and standby of its own;</li>
 *   <li>a replica does not finish recovering — so the master neither starts nor promotes it —
 *   before it holds the primary's whole state ({@link CopyCatchUp}); one that gets none within
 *   {@link #STANDBY_WAIT} fails its recovery, which also takes it out of the in-sync set
 *   (Elasticsearch marks it in sync when it finalizes the recovery, before this listener runs);</li>
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
    private final CopyCatchUp catchUp;
    private final ThreadPool threadPool;

    public LockShardListener(
            LockService locks,
            ShardStateLog log,
            ClusterService clusterService,
            CopyCatchUp catchUp,
            ThreadPool threadPool) {
        this.locks = locks;
        this.log = log;
        this.clusterService = clusterService;
        this.catchUp = catchUp;
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
                try {
                    restore(shard, partition);
                } catch (StateLogDamagedException e) {
                    refuse(shard, partition, e);
                }
            } else {
                log.delete(shard);
                locks.lifecycle().standbys().drop(partition);
                forgetRefusal(shard);
            }
            l.onResponse(null);
        });
    }

    /**
     * Rebuilds the standby of {@code partition} from its persisted batches (a node restart): every
     * batch, in order, or none at all — a batch that does not follow the one before it is damage,
     * like a bad checksum. A log of the format before this one is rewritten in this one.
     */
    private void restore(IndexShard shard, int partition) throws IOException {
        locks.lifecycle().standbys().drop(partition);
        Path file = ShardStateLog.file(shard);
        StateLogFile.Contents contents = log.restore(shard);
        List<String> batches = contents.records();
        for (int i = 0; i < batches.size(); i++) {
            boolean applied;
            try {
                applied = locks.lifecycle().standbys().apply(partition, batches.get(i));
            } catch (IllegalArgumentException e) {
                locks.lifecycle().standbys().drop(partition);
                String why = StateFormats.refused(e) ? ": " : " does not follow the one before it: ";
                throw new StateLogDamagedException(
                        file, "batch " + (i + 1) + " of " + batches.size() + why + e.getMessage());
            }
            if (applied == false) {
                throw new StateLogDamagedException(file, "it does not start with a whole state");
            }
        }
        if (contents.legacy()) {
            log.checkpoint(shard, locks.lifecycle().wholeState(partition));
            logger.info("lock state log [{}] rewritten in format [{}]", file, StateLogFile.FORMAT);
        }
        logger.info("lock partition [{}]: restored {} persisted batches from {}", partition, batches.size(), file);
    }

    /**
     * A copy that starts over — from another copy, or empty because an operator accepted losing
     * the partition's locks ({@code allocate_empty_primary}) — no longer has the log that
     * {@link #refuse} marked its store corrupted for; the lock index holds no documents, so the
     * mark protects nothing else. Without this the forced empty copy fails on the mark.
     */
    private void forgetRefusal(IndexShard shard) throws IOException {
        if (shard.store().isMarkedCorrupted()) {
            shard.store().removeCorruptionMarker();
            logger.warn(
                    "lock partition [{}]: starting over {}; removed the mark of a refused copy",
                    shard.shardId().id(),
                    shard.routingEntry().recoverySource());
        }
    }

    /**
     * A copy whose state log cannot be trusted is not used (docs/RELIABILITY.md "A damaged state
     * log"): its store is marked corrupted, as Elasticsearch marks a store whose files fail their
     * checksums, so that the primary is allocated to another copy if one exists and never to this
     * one; and its recovery fails with a reason that names the file and the way out. With no other
     * copy the partition stays unassigned and answers 503 with that reason
     * ({@link PartitionTable#unavailable}) until an operator accepts the loss.
     */
    private void refuse(IndexShard shard, int partition, StateLogDamagedException damage) throws IOException {
        locks.lifecycle().standbys().drop(partition);
        String reason = "lock partition [" + partition + "]: " + damage.getMessage() + ". "
                + PartitionTable.REFUSAL_MARK
                + " Elasticsearch recovers the partition from another copy if one exists; with none, its locks"
                + " answer 503 until an operator accepts losing them with POST _cluster/reroute {\"commands\":"
                + " [{\"allocate_empty_primary\": {\"index\": \"" + LockIndex.NAME + "\", \"shard\": " + partition
                + ", \"node\": \"" + clusterService.localNode().getName() + "\", \"accept_data_loss\": true}}]},"
                + " after which the partition reopens empty in recovery grace (docs/RELIABILITY.md \"A damaged state"
                + " log\")";
        logger.error(reason);
        shard.store().markStoreCorrupted(new IOException(reason, damage));
        throw new ElasticsearchException(reason, damage);
    }

    @Override
    public void afterIndexShardRecovery(IndexShard shard, ActionListener<Void> listener) {
        if (locks.replicated() == false || shard.routingEntry().primary()) {
            listener.onResponse(null);
            return;
        }
        long began = System.nanoTime();
        awaitStandby(shard, began + STANDBY_WAIT.nanos(), listener.delegateFailureAndWrap((l, v) -> {
            long millis = TimeValue.nsecToMSec(System.nanoTime() - began);
            locks.lifecycle().standbys().recoveryWaited(shard.shardId().id(), millis);
            logger.debug(
                    "lock partition [{}]: this copy's recovery waited {}ms for the whole state",
                    shard.shardId().id(),
                    millis);
            l.onResponse(null);
        }));
    }

    /**
     * Completes {@code listener} once this node has a standby of {@code shard}'s partition: a batch
     * may have brought it, else the copy catches up with the owner ({@link CopyCatchUp}), again
     * every {@link #STANDBY_RETRY} while the owner cannot be reached.
     */
    private void awaitStandby(IndexShard shard, long deadlineNanos, ActionListener<Void> listener) {
        int partition = shard.shardId().id();
        if (locks.lifecycle().standbys().has(partition)) {
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
        Runnable again = () -> threadPool.schedule(
                () -> awaitStandby(shard, deadlineNanos, listener), STANDBY_RETRY, threadPool.generic());
        catchUp.run(
                shard,
                ActionListener.wrap(
                        has -> {
                            if (has) {
                                listener.onResponse(null);
                            } else {
                                again.run();
                            }
                        },
                        e -> {
                            logger.debug(
                                    "lock partition [{}]: catching up with the owner failed: {}",
                                    partition,
                                    e.getMessage());
                            again.run();
                        }));
    }

    @Override
    public void beforeIndexShardClosed(ShardId shardId, IndexShard shard, Settings settings) {
        log.close(shardId);
        if (locks.replicated()) {
            locks.lifecycle().standbys().drop(shardId.id());
        }
    }
}
