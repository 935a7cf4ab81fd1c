package org.eslm.replication;

import java.io.IOException;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionListenerResponseHandler;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.action.support.ActiveShardCount;
import org.elasticsearch.action.support.ListenerTimeouts;
import org.elasticsearch.action.support.replication.ReplicationOperation;
import org.elasticsearch.action.support.replication.ReplicationRequest;
import org.elasticsearch.action.support.replication.ReplicationResponse;
import org.elasticsearch.action.support.replication.TransportReplicationAction;
import org.elasticsearch.cluster.action.shard.ShardStateAction;
import org.elasticsearch.cluster.block.ClusterBlockLevel;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.util.concurrent.EsExecutors;
import org.elasticsearch.common.util.concurrent.ThreadContext;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.index.shard.ShardId;
import org.elasticsearch.indices.IndicesService;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.transport.TransportRequestOptions;
import org.elasticsearch.transport.TransportService;
import org.eslm.bridge.NativeBounds;
import org.eslm.cluster.LockShards;
import org.eslm.cluster.PartitionCopies;
import org.eslm.cluster.PartitionManager;
import org.eslm.service.LockService;
import org.eslm.service.ReplicationChannel;

/**
 * {@code internal:locks/replicate}: a partition's batches through Elasticsearch's replication of
 * its shard, the way Elasticsearch replicates its own retention leases (docs/ARCHITECTURE.md
 * "Replication"; docs/design/replication-research.md). Elasticsearch checks the primary term and
 * the allocation id on the primary, sends the batch to every tracked copy, fails (through the
 * master) a copy that does not take it, and answers only when every copy answered. No document
 * is written: the primary persists the batch in its shard folder ({@link ShardStateLog}) and each
 * replica applies it to its standby table and persists it too.
 *
 * <p>Only this node's {@link LockService} sends batches, straight to its own primary handler
 * with its allocation id and epoch pinned, never through the reroute phase: a batch that finds
 * another primary or term fails instead of going elsewhere.
 */
public final class LockReplicationAction
        extends TransportReplicationAction<
                LockReplicationAction.Batch, LockReplicationAction.Batch, ReplicationResponse>
        implements ReplicationChannel {
    public static final String NAME = "internal:locks/replicate";
    public static final ActionType<ReplicationResponse> TYPE = new ActionType<>(NAME);
    /** The pool that applies and persists batches, primary and replica side (registered by the plugin). */
    public static final String EXECUTOR = "locks_replication";
    /**
     * How long a primary waits for a copy that may first have to catch up (it has not had the whole
     * state from this owner: a recovering copy fetches the owner's whole table before it answers,
     * docs/ARCHITECTURE.md "Replication") before Elasticsearch fails that copy: a frozen replica
     * must not stall every lock of its partition until the cluster drops its node.
     */
    static final TimeValue REPLICA_TIMEOUT = TimeValue.timeValueMillis(NativeBounds.CATCHING_UP_COPY_WAIT_MS);
    /**
     * How long a primary waits for a copy that has had the whole state from it, which only applies
     * and persists the batch: a frozen or cut-off copy costs its partition about this long, then is
     * failed (docs/RELIABILITY.md "Availability"). Longer than a 1 s pause of the copy's node (a
     * GC pause is no reason to rebuild a copy), short enough that a frozen copy costs at most
     * 1.5 s. Large batches get {@link NativeBounds#SYNCED_COPY_MS_PER_MB} on top. The core's bounds
     * (lock_core::ownership::bounds).
     */
    static final TimeValue SYNCED_COPY_WAIT = TimeValue.timeValueMillis(NativeBounds.SYNCED_COPY_WAIT_MS);

    private static final Logger logger = LogManager.getLogger(LockReplicationAction.class);

    private final LockService locks;
    private final ShardStateLog log;
    private final PartitionCopies copies;
    private final CopyCatchUp catchUp;

    @Inject
    public LockReplicationAction(
            Settings settings,
            TransportService transportService,
            ClusterService clusterService,
            IndicesService indicesService,
            ThreadPool threadPool,
            ShardStateAction shardStateAction,
            ActionFilters actionFilters,
            LockService locks,
            PartitionManager partitions,
            ShardStateLog log,
            PartitionCopies copies,
            CopyCatchUp catchUp) {
        super(
                settings,
                NAME,
                transportService,
                clusterService,
                indicesService,
                threadPool,
                shardStateAction,
                actionFilters,
                Batch::new,
                Batch::new,
                threadPool.executor(EXECUTOR),
                SyncGlobalCheckpointAfterOperation.DoNotSync,
                PrimaryActionExecution.Force,
                ReplicaActionExecution.BypassCircuitBreaker);
        this.locks = locks;
        this.log = log;
        this.copies = copies;
        this.catchUp = catchUp;
        locks.connectReplication(this, partitions::batchFailed);
    }

    @Override
    @SuppressWarnings("try") // the stored context restores the caller's thread context on close
    public void ship(int partition, long epoch, boolean full, String batchJson, ActionListener<Void> listener) {
        IndexShard shard = LockShards.local(indicesService, clusterService.state(), partition);
        if (shard == null) {
            listener.onFailure(new IllegalStateException("no local copy of lock partition [" + partition + "]"));
            return;
        }
        Batch batch = new Batch(shard.shardId(), epoch, full, batchJson);
        var request = new ConcreteShardRequest<>(
                batch, shard.routingEntry().allocationId().getId(), epoch);
        ThreadContext threadContext = threadPool.getThreadContext();
        try (ThreadContext.StoredContext ignored = threadContext.newEmptySystemContext()) {
            transportService.sendRequest(
                    clusterService.localNode(),
                    transportPrimaryAction,
                    request,
                    TransportRequestOptions.EMPTY,
                    // Answered on the thread that completed the batch: what follows (answering the
                    // waiting requests, taking the next batch) never blocks.
                    new ActionListenerResponseHandler<>(
                            listener.map(r -> null), ReplicationResponse::new, EsExecutors.DIRECT_EXECUTOR_SERVICE));
        }
    }

    @Override
    protected void doExecute(Task task, Batch request, ActionListener<ReplicationResponse> listener) {
        listener.onFailure(new IllegalArgumentException("[" + NAME + "] is sent by the lock service only"));
    }

    @Override
    protected ReplicationResponse newResponseInstance(StreamInput in) throws IOException {
        return new ReplicationResponse(in);
    }

    @Override
    protected void shardOperationOnPrimary(
            Batch batch, IndexShard primary, ActionListener<PrimaryResult<Batch, ReplicationResponse>> listener) {
        ActionListener.completeWith(listener, () -> {
            if (primary.getOperationPrimaryTerm() != batch.epoch) {
                throw new IllegalStateException(
                        "lock partition [" + batch.shardId().id() + "] batch of epoch [" + batch.epoch
                                + "] reached a primary in term [" + primary.getOperationPrimaryTerm() + "]");
            }
            if (batch.heartbeat()) {
                return new PrimaryResult<>(batch, new ReplicationResponse()); // nothing to persist
            }
            if (batch.full) {
                copies.based(batch.shardId().id(), targets(primary));
            }
            // A whole-state batch is its own checkpoint: the first batch of a partition opening
            // again after its log failed, before this node counts it as served.
            log.write(
                    primary,
                    batch.json,
                    () -> batch.full
                            ? batch.json
                            : locks.lifecycle().wholeState(batch.shardId().id()));
            return new PrimaryResult<>(batch, new ReplicationResponse()) {
                /** The primary's fsync, while the replicas apply the batch (the answer waits for both). */
                @Override
                public void runPostReplicationActions(ActionListener<Void> afterFsync) {
                    ActionListener.run(afterFsync, l -> {
                        log.force(primary);
                        l.onResponse(null);
                    });
                }
            };
        });
    }

    /** The allocation ids the batch goes to besides the primary (the copies Elasticsearch tracks). */
    private static Set<String> targets(IndexShard primary) {
        String own = primary.routingEntry().allocationId().getId();
        return primary.getReplicationGroup().getReplicationTargets().stream()
                .map(r -> r.allocationId().getId())
                .filter(id -> id.equals(own) == false)
                .collect(Collectors.toUnmodifiableSet());
    }

    /**
     * A copy acknowledges only what it applied (docs/ARCHITECTURE.md "Replication"): a batch it
     * applies is persisted (a whole state as the log's checkpoint, a delta appended) before it
     * answers; a batch it cannot apply — it has no standby yet (recovering) or missed a batch —
     * makes it catch up with the owner first ({@link CopyCatchUp}), then apply the batch again.
     * When that fails too, the batch fails, and the primary fails this copy through the master,
     * as for any replica write that failed: it recovers anew.
     */
    @Override
    protected void shardOperationOnReplica(Batch batch, IndexShard replica, ActionListener<ReplicaResult> done) {
        // Every answer this copy gives its owner, in the owner's term, renews the owner's lease: a
        // promotion of this copy waits it out (docs/ARCHITECTURE.md "Silent owners").
        int partition = batch.shardId().id();
        ActionListener<ReplicaResult> listener = done.map(result -> {
            locks.lifecycle().standbys().acknowledged(partition);
            return result;
        });
        if (batch.heartbeat()) {
            listener.onResponse(new ReplicaResult());
            return;
        }
        ActionListener.run(listener, l -> {
            if (applied(batch)) {
                persist(replica, batch);
                l.onResponse(new ReplicaResult());
                return;
            }
            catchUp.run(replica, l.delegateFailureAndWrap((caughtUp, has) -> {
                if (has == false || applied(batch) == false) {
                    throw new IllegalStateException(
                            "lock partition [" + batch.shardId().id() + "]: this copy cannot apply " + batch
                                    + " and could not catch up with the owner");
                }
                persist(replica, batch);
                logger.info(
                        "lock partition [{}]: this copy could not apply {}; caught up with the owner's live state",
                        batch.shardId().id(),
                        batch);
                caughtUp.onResponse(new ReplicaResult());
            }));
        });
    }

    /** Applies {@code batch} to this copy's standby; false when it does not follow it (see {@link #shardOperationOnReplica}). */
    private boolean applied(Batch batch) {
        int partition = batch.shardId().id();
        try {
            return locks.lifecycle().standbys().apply(partition, batch.json);
        } catch (IllegalArgumentException e) {
            if (StateFormats.refused(e)) {
                // A newer plugin's state: catching up would fetch more of it. Fail the batch with
                // the reason (docs/ARCHITECTURE.md "Formats and versions").
                throw new IllegalStateException(
                        "lock partition [" + partition + "]: " + batch + " " + e.getMessage(), e);
            }
            logger.debug(
                    "lock partition [{}]: {} does not follow this copy's standby: {}",
                    partition,
                    batch,
                    e.getMessage());
            return false;
        }
    }

    private void persist(IndexShard replica, Batch batch) throws IOException {
        if (batch.full) {
            log.checkpoint(replica, batch.json);
        } else {
            log.append(replica, batch.json, () -> locks.lifecycle()
                    .wholeState(batch.shardId().id()));
        }
    }

    /** Batches are not documents: a missing master (its write block) must not stop them. */
    @Override
    protected ClusterBlockLevel globalBlockLevel() {
        return null;
    }

    @Override
    public ClusterBlockLevel indexBlockLevel() {
        return null;
    }

    @Override
    protected TransportRequestOptions transportOptions() {
        return TransportRequestOptions.timeout(REPLICA_TIMEOUT);
    }

    /**
     * A copy that did not take a batch is failed and marked stale through the master, as for
     * document writes, so it can never be promoted with a table that lacks a committed change.
     * (The base proxy leaves it alone: it is for operations a replica may miss.)
     */
    @Override
    protected ReplicationOperation.Replicas<Batch> newReplicasProxy() {
        return new FailingReplicasProxy();
    }

    private final class FailingReplicasProxy extends ReplicasProxy {
        /**
         * Sends the batch, and gives up on a copy that has had the whole state from this owner after
         * {@link #SYNCED_COPY_WAIT} (plus {@link NativeBounds#SYNCED_COPY_MS_PER_MB} a megabyte of batch):
         * that copy needs no catch-up, so a longer silence means it is frozen or cut off. Other
         * copies get the transport's {@link #REPLICA_TIMEOUT}.
         */
        @Override
        public void performOn(
                ShardRouting replica,
                Batch request,
                long primaryTerm,
                long globalCheckpoint,
                long maxSeqNoOfUpdatesOrDeletes,
                ActionListener<ReplicationOperation.ReplicaResponse> listener) {
            ActionListener<ReplicationOperation.ReplicaResponse> answer = listener;
            if (copies.synced(replica.shardId().id(), replica.allocationId().getId())) {
                long allowance = request.json.length() * NativeBounds.SYNCED_COPY_MS_PER_MB / (1L << 20);
                answer = ListenerTimeouts.wrapWithTimeout(
                        threadPool,
                        listener,
                        TimeValue.timeValueMillis(SYNCED_COPY_WAIT.millis() + allowance),
                        threadPool.executor(EXECUTOR),
                        "lock batch to copy [" + replica.allocationId().getId() + "]");
            }
            super.performOn(replica, request, primaryTerm, globalCheckpoint, maxSeqNoOfUpdatesOrDeletes, answer);
        }

        @Override
        public void failShardIfNeeded(
                ShardRouting replica, long primaryTerm, String message, Exception e, ActionListener<Void> listener) {
            locks.metrics().copyFailed();
            String copy = replica.allocationId().getId();
            ActionListener<Void> failed = orWhenCommitted(replica.shardId(), copy, primaryTerm, listener);
            Runnable throughElasticsearch = () ->
                    shardStateAction.remoteShardFailed(replica.shardId(), copy, primaryTerm, true, message, e, failed);
            DiscoveryNode master = clusterService.state().nodes().getMasterNode();
            if (SilentCopyFailure.silence(e) == false || master == null) {
                throughElasticsearch.run();
                return;
            }
            // A copy that did not answer: its node's other lock copies are failed in the same update.
            transportService.sendRequest(
                    master,
                    SilentCopyFailure.TYPE.name(),
                    new SilentCopyFailure.Request(replica.shardId(), copy, primaryTerm, message),
                    TransportRequestOptions.timeout(SilentCopyFailure.ASK_TIMEOUT),
                    new ActionListenerResponseHandler<>(
                            ActionListener.wrap(done -> failed.onResponse(null), asked -> {
                                logger.info(
                                        "failing the silent copy [{}] of {} through the master's lock action "
                                                + "failed ({}); asking Elasticsearch's shard-failed path",
                                        copy,
                                        replica.shardId(),
                                        asked.getMessage());
                                throughElasticsearch.run();
                            }),
                            in -> ActionResponse.Empty.INSTANCE,
                            threadPool.executor(EXECUTOR)));
        }

        @Override
        public void markShardCopyAsStaleIfNeeded(
                ShardId shardId, String allocationId, long primaryTerm, ActionListener<Void> listener) {
            shardStateAction.remoteShardFailed(
                    shardId,
                    allocationId,
                    primaryTerm,
                    true,
                    "mark copy as stale",
                    null,
                    orWhenCommitted(shardId, allocationId, primaryTerm, listener));
        }

        private ActionListener<Void> orWhenCommitted(
                ShardId shardId, String copy, long primaryTerm, ActionListener<Void> listener) {
            return CommittedCopyFailure.orWhenCommitted(
                    clusterService,
                    threadPool.getThreadContext(),
                    threadPool.executor(EXECUTOR),
                    shardId,
                    copy,
                    primaryTerm,
                    listener);
        }
    }

    /** One batch of a partition: its epoch and the core's JSON ({@code {"full"}} or {@code {"delta"}}). */
    public static final class Batch extends ReplicationRequest<Batch> {
        final long epoch;
        final boolean full;
        final String json;

        Batch(ShardId shardId, long epoch, boolean full, String json) {
            super(shardId);
            this.epoch = epoch;
            this.full = full;
            this.json = json;
            waitForActiveShards(ActiveShardCount.NONE);
        }

        Batch(StreamInput in) throws IOException {
            super(in);
            this.epoch = in.readVLong();
            this.full = in.readBoolean();
            this.json = in.readString();
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeVLong(epoch);
            out.writeBoolean(full);
            out.writeString(json);
        }

        /** A batch with no changes ({@link ReplicationChannel#HEARTBEAT}): acknowledged, not applied nor persisted. */
        boolean heartbeat() {
            return full == false && ReplicationChannel.HEARTBEAT.equals(json);
        }

        @Override
        public String toString() {
            if (heartbeat()) {
                return "lock heartbeat [" + shardId + "] epoch [" + epoch + "]";
            }
            return "lock batch [" + shardId + "] epoch [" + epoch + "]" + (full ? " full" : "") + " (" + json.length()
                    + " chars)";
        }
    }
}
