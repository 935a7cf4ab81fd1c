package org.eslm.cluster;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ResourceAlreadyExistsException;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.admin.indices.create.CreateIndexRequest;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.ClusterChangedEvent;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.ClusterStateListener;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.util.concurrent.ThreadContext;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.gateway.GatewayService;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.indices.IndicesService;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.bridge.BridgeField;
import org.eslm.core.BridgeJson;
import org.eslm.service.LockService;

/**
 * Follows cluster state and makes this node serve exactly the partitions whose primary it holds
 * (docs/ARCHITECTURE.md "Partitions, owners, epochs (cluster-wide correctness)"):
 * <ul>
 *   <li>the elected master creates the lock index when it is missing;</li>
 *   <li>with {@code locks.durability: replicated}, a partition this node gained while it holds
 *   a standby table of it (its replica was promoted, it received the partition by relocation, or
 *   it restarted with the partition's persisted batches) is opened from that table, under a
 *   primary permit of the shard so that no batch of the previous primary can still land: every
 *   holder, lease and session, the token counter, no grace (docs/ARCHITECTURE.md "Replication");</li>
 *   <li>otherwise a partition this node gained is opened in epoch = primary term: with the previous
 *   owner's state when that node is still in the cluster (a planned move: relocation, shutdown),
 *   else empty and in recovery grace (the owner died: its leases must run out first), except a
 *   brand-new index (term 1, no previous owner), which needs no grace;</li>
 *   <li>a partition this node lost is closed; its state is kept for the new owner to fetch;</li>
 *   <li>ownership is the started primary and its term, nothing else: a cluster state without an
 *   elected master (an election, or this node cut off) opens and closes nothing; a cut-off owner
 *   stops granting because the master no longer confirms it ({@link PartitionOwnership}).</li>
 * </ul>
 */
public final class PartitionManager implements ClusterStateListener {
    private static final Logger logger = LogManager.getLogger(PartitionManager.class);

    private final LockService locks;
    private final PartitionOwnership ownership;
    private final Client client;
    private final ThreadPool threadPool;
    private final int partitionCount;
    /** The recovery grace in force now (it follows dynamic raises of {@code locks.lease.max}). */
    private final Supplier<TimeValue> grace;

    private final AtomicBoolean creatingIndex = new AtomicBoolean();
    /** This node began to shut down ({@link #nodeStopping}): it opens no partition any more. */
    private final AtomicBoolean stopping = new AtomicBoolean();

    private final ClusterService clusterService;
    private final IndicesService indices;
    private final PartitionCopies copies;
    private final OwnerChecks checks;
    private final PartitionHandover handover;
    /** Where a hand-over's answer lands: the partition opens, or (no longer ours) stops opening. */
    private final PartitionHandover.Receiver receiver = new PartitionHandover.Receiver() {
        @Override
        public void handedOver(int p, long epoch, String snapshotJson, boolean oldOwnerClosed) {
            PartitionManager.this.handedOver(p, epoch, snapshotJson, oldOwnerClosed);
        }

        @Override
        public void notOurs(int p) {
            opening.remove(p);
        }
    };
    /** How soon a partition given up after a failed batch is looked at again (see {@link #batchFailed}). */
    static final TimeValue RECHECK_AFTER_FAILED_BATCH = TimeValue.timeValueSeconds(1);
    /**
     * Partitions being opened here in an epoch in which another owner (or this node before)
     * already served them: opening one of them empty would issue tokens that were issued before.
     */
    private final Set<Integer> reusedEpoch = ConcurrentHashMap.newKeySet();
    /** Partitions being handed over to this node (state requested, not yet open). */
    private final Set<Integer> opening = ConcurrentHashMap.newKeySet();
    /** The epoch of the last panic handled per partition (see {@link #corePanicked}). */
    private final Map<Integer, Long> panicked = new ConcurrentHashMap<>();

    public PartitionManager(
            LockService locks,
            PartitionOwnership ownership,
            ClusterService clusterService,
            Client client,
            ThreadPool threadPool,
            int partitionCount,
            Supplier<TimeValue> grace,
            IndicesService indices,
            PartitionCopies copies) {
        this.locks = locks;
        this.indices = indices;
        this.copies = copies;
        this.checks = new OwnerChecks(locks, ownership, copies, clusterService, client, threadPool, this::lost);
        this.ownership = ownership;
        this.clusterService = clusterService;
        this.client = client;
        this.threadPool = threadPool;
        this.partitionCount = partitionCount;
        this.grace = grace;
        this.handover = new PartitionHandover(
                client, threadPool, clusterService, ownership, p -> closePartition(p, true), opening::contains);
        locks.onCorePanic(e -> threadPool.generic().execute(() -> corePanicked(e.partition(), e.epoch())));
    }

    /**
     * This node begins to shut down (docs/RELIABILITY.md "Stopping a node"), before Elasticsearch
     * waits for its open HTTP requests: every lock request it coordinates is answered 503 naming
     * it (the clients retry through another node), and every partition it serves is closed as a
     * partition that moves away is — its waiters answered as retryable, so that their coordinators
     * on other nodes re-queue them at the next owner, and its state kept for a new owner that asks
     * while this node lives. When the node leaves the cluster, the master promotes each
     * partition's replica, which opens from its standby table: every holder with its token, no
     * grace ({@code locks.durability: replicated}). From now on this node opens no partition.
     * Never blocks: listeners are completed and partitions closed on the calling thread.
     */
    public void nodeStopping() {
        if (stopping.compareAndSet(false, true) == false) {
            return;
        }
        int answered = locks.shutdown().begin();
        int closed = 0;
        for (Integer p : ownership.epochs().keySet()) {
            try {
                lost(p);
                closed++;
            } catch (RuntimeException e) {
                logger.warn(() -> "closing lock partition [" + p + "] at shutdown failed", e);
            }
        }
        logger.info(
                "node shutting down: answered [{}] lock requests it coordinated with 503 (retry on another node),"
                        + " closed [{}] lock partitions for their next owners",
                answered,
                closed);
    }

    @Override
    public void clusterChanged(ClusterChangedEvent event) {
        if (stopping.get()) {
            return; // shutting down: serves nothing any more (nodeStopping)
        }
        checks.start();
        ClusterState state = event.state();
        // What leaves this node is written in the format every node reads (a rolling upgrade).
        locks.lifecycle().peersRead(PeerFormats.oldest(state.nodes()));
        ownership.copyLeases(locks.replicated() && PeerFormats.copyLeases(state.nodes()));
        if (state.nodes().getMasterNodeId() == null
                || state.blocks().hasGlobalBlock(GatewayService.STATE_NOT_RECOVERED_BLOCK)) {
            // No master (an election, or this node is cut off) or a state not yet recovered says
            // nothing about who owns what: ownership is the started primary and its term, and
            // neither changed. Partitions stay open, with their holders and token counters; one
            // whose owner is really cut off stops granting on its own once its last confirmation
            // by the master is older than PartitionOwnership.OWNERSHIP_WINDOW.
            return;
        }
        if (event.nodesDelta().masterNodeChanged()) {
            // A new master after an election: get its confirmation now rather than at the next
            // interval, so the election costs the owner as little of its window as possible.
            checks.now();
        }
        PartitionTable table = PartitionTable.of(state);
        if (table == null) {
            closeAll("lock index missing");
            if (state.nodes().isLocalNodeElectedMaster()) {
                createIndex();
            }
            return;
        }
        PartitionTable previous = PartitionTable.of(event.previousState());
        String local = state.nodes().getLocalNodeId();
        for (int p = 0; p < table.size(); p++) {
            boolean owned = local.equals(table.owner(p));
            if (owned && ownership.serves(p)) {
                if (table.epoch(p) > ownership.epochs().get(p)) {
                    openPartition(p, table.epoch(p), 0, null); // same node, promoted again: raise the epoch
                }
            } else if (owned) {
                if (previous != null
                        && p < previous.size()
                        && previous.owner(p) != null
                        && previous.epoch(p) == table.epoch(p)) {
                    reusedEpoch.add(p); // a relocation, or this node again: tokens of this epoch exist
                } else {
                    reusedEpoch.remove(p);
                }
                gained(p, table.epoch(p), previous == null ? null : previous.owner(p), state);
            } else if (ownership.serves(p)) {
                lost(p);
            }
        }
    }

    /**
     * A batch of {@code p} could not reach its copies: this node is no longer the primary in the
     * partition's epoch (relocated, demoted, failed), or its shard is closing. It stops serving
     * the partition at once (keeping its state for a new owner that asks) and looks again a
     * little later, in case the cluster still names it the owner in the same epoch.
     */
    public void batchFailed(int p) {
        lost(p);
        threadPool.schedule(() -> reopenIfStillPrimary(p), RECHECK_AFTER_FAILED_BATCH, threadPool.generic());
    }

    /**
     * After a failed batch: reopens {@code p} from this node's own last state only if this node's
     * copy is still the shard's primary, in primary mode (not handed off to a relocation target)
     * and in the same term — a batch that failed for a passing reason. Otherwise the cluster state
     * decides, as for any move. Its own cluster state says so, and that may be stale: the partition
     * reopens unconfirmed and serves again only once the elected master confirms it.
     */
    private void reopenIfStillPrimary(int p) {
        ClusterState state = clusterService.state();
        PartitionTable table = PartitionTable.of(state);
        IndexShard shard = LockShards.local(indices, state, p);
        if (stopping.get()
                || table == null
                || p >= table.size()
                || shard == null
                || ownership.serves(p)
                || state.nodes().getLocalNodeId().equals(table.owner(p)) == false
                || shard.routingEntry().primary() == false
                || shard.isRelocatedPrimary()
                || shard.getOperationPrimaryTerm() != table.epoch(p)) {
            return;
        }
        Map<String, Object> kept = handover.takeKept(p);
        logger.info(
                "lock partition [{}] is still this node's in epoch [{}] by its own cluster state; reopening it,"
                        + " unconfirmed until the elected master says so",
                p,
                table.epoch(p));
        if (kept == null) {
            failForNewEpoch(p, table.epoch(p));
        } else if (opening.add(p)) {
            // This node's cluster state may be stale (cut off): it grants and answers nothing
            // until the master confirms it (docs/ARCHITECTURE.md "Cut-off owners").
            try {
                locks.lifecycle().openPartition(p, table.epoch(p), 0, kept);
                ownership.openedUnconfirmed(p, table.epoch(p));
                checks.now();
            } catch (Exception e) {
                logger.error(() -> "failed to reopen lock partition [" + p + "]", e);
            } finally {
                opening.remove(p);
            }
        }
    }

    /**
     * The core panicked in partition {@code p}, served in {@code epoch} (docs/RELIABILITY.md "A
     * panic in the core"). Its table may be inconsistent, so it is closed here without keeping its
     * state for anyone, and this node's copy of its shard is failed: Elasticsearch promotes a
     * replica, whose standby holds every committed change, or — with no other copy — recovers this
     * copy from its persisted batches; either way in a higher primary term, so the partition reopens
     * with its holders and its new tokens are above every earlier one. Once per partition and epoch
     * (every call the failed partition refuses reports the same panic).
     */
    void corePanicked(int p, long epoch) {
        if (p < 0 || epoch < 0 || Long.valueOf(epoch).equals(panicked.put(p, epoch))) {
            return;
        }
        logger.error("the lock core panicked in lock partition [{}] in epoch [{}]; reopening it", p, epoch);
        handover.discard(p, () -> {
            if (Long.valueOf(epoch).equals(ownership.epochs().get(p))) {
                closePartition(p, false);
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

    /** Closes a partition this node lost, keeping its state a while for the new owner to fetch. */
    private void lost(int p) {
        handover.closeAndKeep(p);
    }

    private void gained(int p, long epoch, String previousOwner, ClusterState state) {
        if (opening.add(p) == false) {
            return;
        }
        String local = state.nodes().getLocalNodeId();
        if (previousOwner != null
                && previousOwner.equals(local) == false
                && state.nodes().nodeExists(previousOwner)) {
            if (locks.replicated() && locks.lifecycle().standbys().has(p) && reusedEpoch.contains(p) == false) {
                // A replica promoted while the old primary's node is still in the cluster: the
                // master failed that copy because its owner went silent (SilentOwners: it grants
                // nothing since before the failure), or the node failed its own copy (it closed
                // the partition first). The old owner is asked to close, briefly, then the
                // standby here, which holds every committed change, opens.
                handover.askToClose(p, epoch, previousOwner, receiver);
                return;
            }
            // A planned move: the previous owner closes the partition and hands its state over
            // first, so that two nodes never serve it at once.
            handover.fetch(p, epoch, previousOwner, receiver);
            return;
        }
        if (locks.replicated() && locks.lifecycle().standbys().has(p)) {
            promote(p, epoch, false, () -> openWithoutStandby(p, epoch, previousOwner, clusterService.state()));
            return;
        }
        openWithoutStandby(p, epoch, previousOwner, state);
    }

    /**
     * With a standby here, a handed-over partition opens from it: it holds exactly what was
     * committed, while the previous owner's table may also hold changes whose batch failed.
     */
    private void handedOver(int p, long epoch, String snapshotJson, boolean oldOwnerClosed) {
        Runnable otherwise = snapshotJson != null
                ? () -> open(p, epoch, 0, snapshotJson)
                : () -> openEmpty(p, epoch, grace.get().millis());
        if (locks.replicated() && locks.lifecycle().standbys().has(p)) {
            promote(p, epoch, oldOwnerClosed, otherwise);
        } else {
            otherwise.run();
        }
    }

    /**
     * Opens {@code p} from this node's standby table, under a primary operation permit of its
     * shard: Elasticsearch grants it only once the shard runs in the new term, after every batch
     * of the previous primary finished here and with any later one refused, so the table is
     * final. Unless {@code oldOwnerClosed}, it first waits out the lease this copy's last
     * acknowledgement may have given the old owner ({@code StandbyTables.promotionWait},
     * docs/ARCHITECTURE.md "Silent owners"). Without the shard, the permit, or the standby, falls
     * back to the other ways in.
     */
    private void promote(int p, long epoch, boolean oldOwnerClosed, Runnable otherwise) {
        IndexShard shard = LockShards.local(indices, clusterService.state(), p);
        if (shard == null) {
            otherwise.run();
            return;
        }
        shard.acquirePrimaryOperationPermit(
                ActionListener.wrap(
                        permit -> {
                            try (permit) {
                                if (stopping.get()) {
                                    opening.remove(p);
                                    return;
                                }
                                if (shard.getOperationPrimaryTerm() != epoch
                                        || locks.lifecycle().standbys().has(p) == false) {
                                    otherwise.run();
                                    return;
                                }
                                long wait = oldOwnerClosed
                                        ? 0
                                        : locks.lifecycle().standbys().promotionWait(p);
                                if (wait > 0) {
                                    threadPool.schedule(
                                            () -> promote(p, epoch, false, otherwise),
                                            TimeValue.timeValueNanos(wait),
                                            threadPool.generic());
                                    return;
                                }
                                locks.lifecycle().openFromStandby(p, epoch);
                                ownership.opened(p, epoch);
                                checks.now(); // without copy leases the master watches an owner from its first question
                                logger.info(
                                        "serving lock partition [{}] in epoch [{}] from its replicated state",
                                        p,
                                        epoch);
                                opening.remove(p);
                            }
                        },
                        e -> {
                            logger.warn(
                                    () -> "no primary permit for lock partition [" + p + "]; opening it otherwise", e);
                            otherwise.run();
                        }),
                threadPool.generic());
    }

    private void openWithoutStandby(int p, long epoch, String previousOwner, ClusterState state) {
        String local = state.nodes().getLocalNodeId();
        Map<String, Object> own = handover.takeKept(p);
        if (own != null
                && (previousOwner == null || previousOwner.equals(local))
                && BridgeField.EPOCH.in(own) instanceof Number closedIn
                && closedIn.longValue() == epoch) {
            // This node closed the partition itself (a "no" from a master that had not caught
            // up, a failed batch) and owns it again in the same term: its own last state has
            // every committed change.
            open(p, epoch, 0, BridgeJson.toJson(own));
            return;
        }
        if (own != null) {
            handover.keepAgain(p, own);
        }
        if (previousOwner != null
                && previousOwner.equals(local) == false
                && state.nodes().nodeExists(previousOwner)) {
            handover.fetch(p, epoch, previousOwner, receiver);
        } else {
            // No live previous owner: a brand-new index needs no grace; otherwise the owner died.
            openEmpty(
                    p,
                    epoch,
                    epoch <= 1 && previousOwner == null ? 0 : grace.get().millis());
        }
    }

    /**
     * Opens {@code p} with no state: no copy of it exists here nor at a live previous owner. With
     * {@code locks.durability: replicated} and an epoch that already issued tokens, it fails the
     * shard instead: Elasticsearch assigns it again in a higher term (from this node's persisted
     * batches when it has them), so no token is ever issued twice.
     */
    private void openEmpty(int p, long epoch, long graceMs) {
        if (locks.replicated() && reusedEpoch.contains(p)) {
            failForNewEpoch(p, epoch);
            return;
        }
        open(p, epoch, graceMs, null);
    }

    private void failForNewEpoch(int p, long epoch) {
        opening.remove(p);
        IndexShard shard = LockShards.local(indices, clusterService.state(), p);
        if (shard == null) {
            return;
        }
        String why = "lock partition [" + p + "] has no state to continue epoch [" + epoch
                + "] with; failing its shard so that it is assigned again in a higher term";
        logger.warn(why);
        shard.failShard(why, new IllegalStateException(why));
    }

    private void open(int p, long epoch, long graceMs, String snapshotJson) {
        try {
            openPartition(p, epoch, graceMs, snapshotJson == null ? null : BridgeJson.parse(snapshotJson));
        } catch (Exception e) {
            logger.error(() -> "failed to open lock partition [" + p + "]", e);
        } finally {
            opening.remove(p);
        }
    }

    /** The previous owner's side of a hand-over ({@link PartitionHandover#handOver}). */
    public String handOver(int partition) {
        return handover.handOver(partition);
    }

    private void closeAll(String why) {
        for (Integer p : ownership.epochs().keySet()) {
            logger.warn("stopped serving lock partition [{}]: {}", p, why);
            closePartition(p, false);
        }
    }

    /**
     * Opens {@code partition} in the core (see {@link org.eslm.service.PartitionLifecycle#openPartition}), then serves
     * it, confirmed: it was opened from the state the master just published.
     */
    private void openPartition(int partition, long epoch, long graceMs, Map<String, Object> snapshot) {
        if (stopping.get()) {
            logger.info("not opening lock partition [{}]: this node is shutting down", partition);
            return;
        }
        locks.lifecycle().openPartition(partition, epoch, graceMs, snapshot);
        ownership.opened(partition, epoch);
        checks.now(); // without copy leases the master watches an owner from its first question (SilentOwners)
        logger.info(
                "serving lock partition [{}] in epoch [{}]{}",
                partition,
                epoch,
                snapshot != null ? " (handed over)" : graceMs > 0 ? " after " + graceMs + "ms of recovery grace" : "");
    }

    /**
     * Stops serving {@code partition} (requests stop reaching it at once), then closes it in the
     * core; with {@code export}, answers its state. {@code null} when it was not served.
     */
    private Map<String, Object> closePartition(int partition, boolean export) {
        if (ownership.closed(partition) == false) {
            return null;
        }
        copies.forget(partition);
        return locks.lifecycle().closePartition(partition, export);
    }

    @SuppressWarnings("try") // the stored context restores the caller's thread context on close
    private void createIndex() {
        if (creatingIndex.compareAndSet(false, true) == false) {
            return;
        }
        ThreadContext threadContext = threadPool.getThreadContext();
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            threadContext.markAsSystemContext();
            CreateIndexRequest request =
                    new CreateIndexRequest(LockIndex.NAME).settings(LockIndex.settings(partitionCount));
            client.admin()
                    .indices()
                    .create(
                            request,
                            ActionListener.wrap(
                                    r -> {
                                        logger.info(
                                                "created lock index [{}] with [{}] partitions",
                                                LockIndex.NAME,
                                                partitionCount);
                                        creatingIndex.set(false);
                                    },
                                    e -> {
                                        creatingIndex.set(false);
                                        if (e instanceof ResourceAlreadyExistsException == false) {
                                            logger.warn("failed to create lock index [" + LockIndex.NAME + "]", e);
                                        }
                                    }));
        }
    }
}
