package org.eslm.cluster;

import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.ClusterChangedEvent;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.ClusterStateListener;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.gateway.GatewayService;
import org.elasticsearch.indices.IndicesService;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.service.LockService;

/**
 * Follows cluster state and makes this node serve exactly the partitions whose primary it holds
 * (docs/ARCHITECTURE.md "Partitions, owners, epochs (cluster-wide correctness)"): it decides which
 * partitions this node gained and lost, and how each gained one comes in; the rooms beside it do
 * the rest.
 * <ul>
 *   <li>a partition gained while this node holds a standby table of it in a new epoch (its
 *   replica was promoted, or it restarted with the persisted batches) is promoted
 *   ({@link PartitionPromotion}): every holder, lease and session, the token counter, no grace;</li>
 *   <li>a partition whose previous owner is still in the cluster in the same epoch (a planned move:
 *   relocation, shutdown) is handed over ({@link PartitionHandover}) so that two nodes never serve
 *   it at once, then opened from the standby or the state handed over;</li>
 *   <li>otherwise it opens without a standby ({@link PartitionOpening}): empty in recovery grace
 *   (the owner died), except a brand-new index (term 1, no previous owner);</li>
 *   <li>a partition this node lost is closed, its state kept for the new owner to fetch;</li>
 *   <li>ownership is the started primary and its term, nothing else: a cluster state without an
 *   elected master (an election, or this node cut off) opens and closes nothing; a cut-off owner
 *   stops serving because its lease is not renewed (the core's ownership protocol).</li>
 * </ul>
 * The elected master creates the lock index when it is missing ({@link LockIndexCreation}).
 */
public final class PartitionManager implements ClusterStateListener {
    private static final Logger logger = LogManager.getLogger(PartitionManager.class);
    /** How soon a partition given up after a failed batch is looked at again (see {@link #batchFailed}). */
    static final TimeValue RECHECK_AFTER_FAILED_BATCH = TimeValue.timeValueSeconds(1);

    private final LockService locks;
    private final PartitionOwnership ownership;
    private final ThreadPool threadPool;
    /** The recovery grace in force now (it follows dynamic raises of {@code locks.lease.max}). */
    private final Supplier<TimeValue> grace;
    /** This node began to shut down ({@link #nodeStopping}): it opens no partition any more. */
    private final AtomicBoolean stopping = new AtomicBoolean();

    private final OwnerChecks checks;
    private final PartitionHandover handover;
    private final PartitionOpening opening;
    private final PartitionPromotion promotion;
    private final CorePanics panics;
    private final LockIndexCreation indexCreation;
    /** Where a hand-over's answer lands: the partition opens, or (no longer ours) stops opening. */
    private final PartitionHandover.Receiver receiver = new PartitionHandover.Receiver() {
        @Override
        public void handedOver(int p, long epoch, String snapshotJson, boolean oldOwnerClosed) {
            PartitionManager.this.handedOver(p, epoch, snapshotJson, oldOwnerClosed);
        }

        @Override
        public void notOurs(int p) {
            opening.end(p);
        }
    };

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
        this.ownership = ownership;
        this.threadPool = threadPool;
        this.grace = grace;
        this.checks = new OwnerChecks(locks, ownership, copies, clusterService, client, threadPool, this::lost);
        this.handover = new PartitionHandover(
                client,
                threadPool,
                clusterService,
                ownership,
                locks.ownership(),
                this::closeForHandOver,
                this::receiving);
        this.opening = new PartitionOpening(
                locks, ownership, clusterService, indices, copies, checks, handover, grace, stopping);
        this.promotion = new PartitionPromotion(locks, clusterService, indices, threadPool, opening, handover);
        this.panics = new CorePanics(clusterService, indices, ownership, opening, handover);
        this.indexCreation = new LockIndexCreation(client, threadPool, partitionCount);
        locks.onCorePanic(e -> threadPool.generic().execute(() -> panics.panicked(e.partition(), e.epoch())));
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
        boolean copyLeases = locks.replicated() && PeerFormats.copyLeases(state.nodes());
        ownership.copyLeases(copyLeases);
        locks.ownership().source(copyLeases);
        if (state.nodes().getMasterNodeId() == null
                || state.blocks().hasGlobalBlock(GatewayService.STATE_NOT_RECOVERED_BLOCK)) {
            // No master (an election, or this node is cut off) or a state not yet recovered says
            // nothing about who owns what: ownership is the started primary and its term, and
            // neither changed. Partitions stay open, with their holders and token counters; one
            // whose owner is really cut off stops serving on its own once its lease runs out.
            return;
        }
        if (event.nodesDelta().masterNodeChanged()) {
            // A new master after an election: get its confirmation now rather than at the next
            // interval, so the election costs the owner as little of its window as possible.
            checks.now();
        }
        PartitionTable table = PartitionTable.of(state);
        if (table == null) {
            opening.closeAll("lock index missing");
            if (state.nodes().isLocalNodeElectedMaster()) {
                indexCreation.create();
            }
            return;
        }
        follow(table, PartitionTable.of(event.previousState()), state);
    }

    /** Opens what this node gained and closes what it lost between {@code previous} and {@code table}. */
    private void follow(PartitionTable table, PartitionTable previous, ClusterState state) {
        String local = state.nodes().getLocalNodeId();
        for (int p = 0; p < table.size(); p++) {
            boolean owned = local.equals(table.owner(p));
            if (owned && ownership.serves(p)) {
                if (table.epoch(p) > ownership.epochs().get(p)) {
                    // same node, promoted again: raise the epoch
                    opening.openPartition(p, table.epoch(p), 0, null, true);
                }
            } else if (owned) {
                // A relocation, or this node again: tokens of this epoch exist.
                opening.reusesEpoch(
                        p,
                        previous != null
                                && p < previous.size()
                                && previous.owner(p) != null
                                && previous.epoch(p) == table.epoch(p));
                gained(p, table.epoch(p), previous == null ? null : previous.owner(p), state);
            } else if (ownership.serves(p)) {
                // Said, since nothing else says why a partition stopped serving here: a close the
                // applied state decided looks the same in the core's log as a hand-over's.
                logger.info(
                        "lock partition [{}]: cluster state version [{}] names [{}] its owner in epoch [{}];"
                                + " closing it here",
                        p,
                        state.version(),
                        table.owner(p),
                        table.epoch(p));
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
        threadPool.schedule(() -> opening.reopenIfStillPrimary(p), RECHECK_AFTER_FAILED_BATCH, threadPool.generic());
    }

    /** Closes a partition this node lost, keeping its state a while for the new owner to fetch. */
    private void lost(int p) {
        handover.closeAndKeep(p);
    }

    private void gained(int p, long epoch, String previousOwner, ClusterState state) {
        if (opening.begin(p) == false) {
            return;
        }
        String local = state.nodes().getLocalNodeId();
        boolean standby = locks.replicated() && locks.lifecycle().standbys().has(p);
        Runnable otherwise = () -> opening.openWithoutStandby(p, epoch, previousOwner, state, receiver);
        if (previousOwner != null
                && previousOwner.equals(local) == false
                && state.nodes().nodeExists(previousOwner)) {
            if (standby && opening.reusesEpoch(p) == false) {
                // A replica promoted while the old primary's node is still in the cluster: the
                // master failed that copy because its owner went silent (SilentOwners), or the node
                // failed its own copy. The old owner is asked to close while the promotion waits
                // out its lease; the standby here, which holds every committed change, opens then.
                promotion.promoteAskingOldOwner(p, epoch, previousOwner, otherwise);
                return;
            }
            // A planned move: the previous owner closes the partition and hands its state over
            // first, so that two nodes never serve it at once.
            handover.fetch(p, epoch, previousOwner, receiver);
            return;
        }
        if (standby) {
            // A failover when the previous owner left the cluster; none known: this node restarted.
            promotion.promote(
                    p, epoch, false, previousOwner != null && previousOwner.equals(local) == false, otherwise);
            return;
        }
        opening.openWithoutStandby(p, epoch, previousOwner, state, receiver);
    }

    /**
     * With a standby here, a handed-over partition opens from it: it holds exactly what was
     * committed, while the previous owner's table may also hold changes whose batch failed.
     */
    private void handedOver(int p, long epoch, String snapshotJson, boolean oldOwnerClosed) {
        Runnable otherwise = snapshotJson != null
                ? () -> opening.open(p, epoch, 0, snapshotJson)
                : () -> opening.openEmpty(p, epoch, grace.get().millis());
        if (locks.replicated() && locks.lifecycle().standbys().has(p)) {
            promotion.promote(p, epoch, oldOwnerClosed, false, otherwise);
        } else {
            otherwise.run();
        }
    }

    /** Closes a served partition for its next owner, answering its state (the hand-over's close). */
    private Map<String, Object> closeForHandOver(int p) {
        return opening.closePartition(p, true);
    }

    /** Whether this node is still receiving {@code p} itself (a hand-over asked of it then waits). */
    private boolean receiving(int p) {
        return opening.receiving(p);
    }

    /** The previous owner's side of a hand-over ({@link PartitionHandover#handOver}). */
    public String handOver(int partition, OptionalLong askerEpoch) {
        return handover.handOver(partition, askerEpoch);
    }
}
