package org.eslm.cluster;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.indices.IndicesService;
import org.eslm.bridge.BridgeField;
import org.eslm.core.BridgeJson;
import org.eslm.service.LockService;

/**
 * Opening and closing partitions on this node (docs/ARCHITECTURE.md "Partitions, owners, epochs
 * (cluster-wide correctness)", the table of ownership changes): in the core, in the bookkeeping
 * ({@link PartitionOwnership}), and asking the master at once; the ways in without a standby table
 * (a hand-over's state, this node's own kept state, empty in recovery grace, or — with no state to
 * continue an epoch that issued tokens — failing this copy for a higher term); and reopening after
 * a failed batch. The partitions being opened here are tracked, so that one opening at a time
 * runs per partition.
 */
final class PartitionOpening {
    private static final Logger logger = LogManager.getLogger(PartitionOpening.class);

    private final LockService locks;
    private final PartitionOwnership ownership;
    private final ClusterService clusterService;
    private final IndicesService indices;
    private final PartitionCopies copies;
    private final OwnerChecks checks;
    private final PartitionHandover handover;
    /** The recovery grace in force now (it follows dynamic raises of {@code locks.lease.max}). */
    private final Supplier<TimeValue> grace;
    /** This node began to shut down: it opens no partition any more. */
    private final AtomicBoolean stopping;

    /** Partitions being opened here (state requested, promotion waiting, not yet open). */
    private final Set<Integer> opening = ConcurrentHashMap.newKeySet();
    /**
     * Partitions being opened here in an epoch in which another owner (or this node before)
     * already served them: opening one of them empty would issue tokens that were issued before.
     */
    private final Set<Integer> reusedEpoch = ConcurrentHashMap.newKeySet();

    PartitionOpening(
            LockService locks,
            PartitionOwnership ownership,
            ClusterService clusterService,
            IndicesService indices,
            PartitionCopies copies,
            OwnerChecks checks,
            PartitionHandover handover,
            Supplier<TimeValue> grace,
            AtomicBoolean stopping) {
        this.locks = locks;
        this.ownership = ownership;
        this.clusterService = clusterService;
        this.indices = indices;
        this.copies = copies;
        this.checks = checks;
        this.handover = handover;
        this.grace = grace;
        this.stopping = stopping;
    }

    /** Starts opening {@code p}; {@code false} when an opening of it already runs. */
    boolean begin(int p) {
        return opening.add(p);
    }

    /** The opening of {@code p} ended (opened, given up, or no longer this node's). */
    void end(int p) {
        opening.remove(p);
    }

    /** Whether {@code p} is being opened here (this node is still receiving it itself). */
    boolean receiving(int p) {
        return opening.contains(p);
    }

    /** Whether this node shuts down (it opens nothing any more). */
    boolean stopping() {
        return stopping.get();
    }

    /** Notes whether the epoch {@code p} is gained in already issued tokens (a relocation, this node again). */
    void reusesEpoch(int p, boolean reused) {
        if (reused) {
            reusedEpoch.add(p);
        } else {
            reusedEpoch.remove(p);
        }
    }

    /** Whether the epoch {@code p} is gained in already issued tokens. */
    boolean reusesEpoch(int p) {
        return reusedEpoch.contains(p);
    }

    /**
     * Opens {@code p} in the core (see {@link org.eslm.service.PartitionLifecycle#openPartition}),
     * then serves it; {@code confirmed} when opened from the state the master just published.
     */
    void openPartition(int p, long epoch, long graceMs, Map<String, Object> snapshot, boolean confirmed) {
        if (stopping.get()) {
            logger.info("not opening lock partition [{}]: this node is shutting down", p);
            return;
        }
        locks.lifecycle().openPartition(p, epoch, graceMs, snapshot, confirmed);
        ownership.opened(p, epoch);
        checks.now(); // without copy leases the master watches an owner from its first question
        logger.info(
                "serving lock partition [{}] in epoch [{}]{}",
                p,
                epoch,
                snapshot != null ? " (handed over)" : graceMs > 0 ? " after " + graceMs + "ms of recovery grace" : "");
    }

    /** Opens {@code p} from this node's standby table, in the new epoch: no grace (PartitionPromotion). */
    void openFromStandby(int p, long epoch) {
        try {
            locks.lifecycle().openFromStandby(p, epoch);
            ownership.opened(p, epoch);
            checks.now(); // without copy leases the master watches an owner from its first question
            logger.info("serving lock partition [{}] in epoch [{}] from its replicated state", p, epoch);
        } finally {
            opening.remove(p);
        }
    }

    /** Opens {@code p}, ending its opening, from {@code snapshotJson} (or empty with {@code graceMs}). */
    void open(int p, long epoch, long graceMs, String snapshotJson) {
        try {
            openPartition(p, epoch, graceMs, snapshotJson == null ? null : BridgeJson.parse(snapshotJson), true);
        } catch (Exception e) {
            logger.error(() -> "failed to open lock partition [" + p + "]", e);
        } finally {
            opening.remove(p);
        }
    }

    /**
     * Opens {@code p} with no standby here: from this node's own kept state when it closed the
     * partition itself in this same epoch, from the live previous owner's hand-over, or empty
     * (a brand-new index needs no grace; otherwise the owner died). A hand-over's answer lands in
     * {@code receiver}.
     */
    void openWithoutStandby(
            int p, long epoch, String previousOwner, ClusterState state, PartitionHandover.Receiver receiver) {
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
    void openEmpty(int p, long epoch, long graceMs) {
        if (locks.replicated() && reusedEpoch.contains(p)) {
            failForNewEpoch(p, epoch);
            return;
        }
        open(p, epoch, graceMs, null);
    }

    /** Fails this node's copy of {@code p}, which has no state to continue {@code epoch} with. */
    void failForNewEpoch(int p, long epoch) {
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

    /**
     * Stops serving {@code p} (requests stop reaching it at once), then closes it in the core; with
     * {@code export}, answers its state. {@code null} when it was not served.
     */
    Map<String, Object> closePartition(int p, boolean export) {
        if (ownership.closed(p) == false) {
            return null;
        }
        copies.forget(p);
        return locks.lifecycle().closePartition(p, export);
    }

    /** Closes every partition served here. */
    void closeAll(String why) {
        for (Integer p : ownership.epochs().keySet()) {
            logger.warn("stopped serving lock partition [{}]: {}", p, why);
            closePartition(p, false);
        }
    }

    /**
     * After a failed batch: reopens {@code p} from this node's own last state only if this node's
     * copy is still the shard's primary, in primary mode (not handed off to a relocation target)
     * and in the same term — a batch that failed for a passing reason. Otherwise the cluster state
     * decides, as for any move. Its own cluster state says so, and that may be stale: the partition
     * reopens unconfirmed and serves again only once its lease is renewed (docs/ARCHITECTURE.md
     * "Cut-off owners").
     *
     * <p>A partition found open whose batches no longer flow failed its first batch while it was
     * still opening (a state log that cannot be written fails it at once: docs/RELIABILITY.md "Disk
     * faults"): the failure found it not open yet and closed nothing, and it would stay open and
     * refuse every request, without a lease, for good. It is closed and reopened here.
     */
    void reopenIfStillPrimary(int p) {
        if (ownership.serves(p) && locks.lifecycle().replicating(p) == false && opening.contains(p) == false) {
            logger.info("lock partition [{}] failed its first batch while it opened; closing it to reopen it", p);
            handover.closeAndKeep(p);
        }
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
                        + " unconfirmed until its lease is renewed",
                p,
                table.epoch(p));
        if (kept == null) {
            failForNewEpoch(p, table.epoch(p));
        } else if (opening.add(p)) {
            try {
                openPartition(p, table.epoch(p), 0, kept, false);
            } catch (Exception e) {
                logger.error(() -> "failed to reopen lock partition [" + p + "]", e);
            } finally {
                opening.remove(p);
            }
        }
    }
}
