package org.eslm.service;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeFormat;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.core.CoreClient;

/**
 * A partition's life in this node's core, as the cluster code drives it (docs/ARCHITECTURE.md
 * "Partitions, owners, epochs", "Replication"): opened from a hand-over, a standby or empty; its state
 * exported for a copy that catches up or a new owner; closed. And the state format the cluster
 * reads, in which whatever leaves this node is written ("Formats and versions").
 */
public final class PartitionLifecycle {
    private static final Logger logger = LogManager.getLogger(PartitionLifecycle.class);

    private final CoreClient client;
    private final PartitionGate partitions;
    private final Commits commits;
    private final Standbys standbys;
    private final PendingRequests pending;
    private final boolean replicated;
    private final AtomicBoolean closed;
    /** Delivers an answer's events once what its call changed on the partition is committed. */
    private final BiConsumer<Integer, Map<String, Object>> handleAfterCommit;
    /** The retryable failure of a request for a partition this node does not serve. */
    private final IntFunction<RuntimeException> notServed;
    /** The state format every node of the cluster reads ({@link #peersRead}), shared with the batches' writer. */
    private final AtomicInteger peerFormat;

    PartitionLifecycle(
            CoreClient client,
            PartitionGate partitions,
            Commits commits,
            Standbys standbys,
            PendingRequests pending,
            boolean replicated,
            AtomicBoolean closed,
            AtomicInteger peerFormat,
            BiConsumer<Integer, Map<String, Object>> handleAfterCommit,
            IntFunction<RuntimeException> notServed) {
        this.client = client;
        this.partitions = partitions;
        this.commits = commits;
        this.standbys = standbys;
        this.pending = pending;
        this.replicated = replicated;
        this.closed = closed;
        this.peerFormat = peerFormat;
        this.handleAfterCommit = handleAfterCommit;
        this.notServed = notServed;
    }

    /**
     * Opens {@code partition} in the core in {@code epoch}: from a hand-over {@code snapshot} of
     * the previous owner (nothing lost, no grace), or empty with {@code graceMs} of recovery grace
     * when the previous owner died (no grants until its leases have surely run out); its lease
     * starts {@code confirmed} by the cluster state the master just published, or not (reopened
     * from this node's own state, which may be stale: it serves once renewed). The caller (the
     * cluster's ownership bookkeeping) records it as served afterwards.
     */
    public void openPartition(
            int partition, long epoch, long graceMs, Map<String, Object> snapshot, boolean confirmed) {
        open(partition, epoch, graceMs, snapshot, false, confirmed);
    }

    /**
     * Opens {@code partition} in {@code epoch} from this node's standby table: its replica became
     * the primary, and the standby holds every change the previous primary committed, so no grace
     * is needed.
     *
     * @throws IllegalArgumentException when this node has no standby of it
     */
    public void openFromStandby(int partition, long epoch) {
        open(partition, epoch, 0, null, true, true);
        standbys.promoted(partition);
    }

    private void open(
            int partition,
            long epoch,
            long graceMs,
            Map<String, Object> snapshot,
            boolean fromStandby,
            boolean confirmed) {
        Map<String, Object> args = new LinkedHashMap<>();
        BridgeField.EPOCH.put(args, epoch);
        BridgeField.GRACE_MS.put(args, graceMs);
        if (snapshot != null) {
            BridgeField.SNAPSHOT.put(args, snapshot);
        }
        BridgeField.FROM_STANDBY.put(args, fromStandby);
        BridgeField.REPLICATED.put(args, replicated);
        BridgeField.CONFIRMED.put(args, confirmed);
        Map<String, Object> envelope = client.call(NativeOp.OPEN_PARTITION, partition, BridgeJson.toJson(args));
        if (replicated) {
            commits.opened(partition, epoch); // its first batch: the whole state
        }
        handleAfterCommit.accept(partition, envelope);
    }

    /**
     * {@code partition}'s live state as the core's full-state JSON, read now and outside the batch
     * stream, for a copy that must catch up (cluster.PartitionStateAction); {@code null} when this
     * node does not serve it.
     */
    public String liveState(int partition) {
        if (partitions.serves(partition) == false) {
            return null;
        }
        return BridgeJson.valueToJson(BridgeField.RESULT.in(client.call(
                NativeOp.EXPORT_FULL, partition, BridgeJson.toJson(NativeFormat.writeArgs(peerFormat.get())))));
    }

    /**
     * Sets the state format every node of the cluster reads (cluster.PeerFormats, from each
     * cluster state): what leaves this node — batches, a copy's catch-up state, a hand-over — is
     * written in it (docs/ARCHITECTURE.md "Formats and versions"). What stays here (a checkpoint
     * of the state log) is written in this build's own.
     */
    public void peersRead(int format) {
        int before = peerFormat.getAndSet(format);
        if (closed.get() == false) {
            // The core refuses what the oldest peer cannot read: a lock-delay, a semaphore limit below
            // the permits held, a group (docs/ARCHITECTURE.md "Formats and versions").
            try {
                client.call(
                        NativeOp.PEERS_READ,
                        NativeLockCore.ALL_PARTITIONS,
                        BridgeJson.toJson(NativeFormat.writeArgs(format)));
            } catch (RuntimeException e) {
                logger.warn(() -> "could not tell the lock core that the cluster reads format [" + format + "]", e);
            }
        }
        if (before != format) {
            logger.info(
                    "the nodes of the cluster read lock state format [{}] (this node's is [{}]): writing it in [{}]",
                    format,
                    NativeFormat.STATE_FORMAT,
                    format);
        }
    }

    /**
     * Sends {@code partition}'s whole state to its copies now (one of them has none, e.g. a new
     * replica); {@code listener} completes when they have it.
     */
    public void syncCopies(int partition, ActionListener<Void> listener) {
        commits.requestFull(partition, listener);
    }

    /**
     * Whether {@code partition}'s batches flow: with {@code locks.durability: replicated}, it has a
     * group-commit lane, which a failed batch removes (memory durability: always).
     */
    public boolean replicating(int partition) {
        return replicated == false || commits.replicates(partition);
    }

    /** The standby tables this node keeps as a replica of partitions. */
    public Standbys standbys() {
        return standbys;
    }

    /**
     * The whole state of {@code partition} as a batch ({@code {"full": ..}}): the live table's
     * when this node serves it, else the standby's; {@code null} when it has neither.
     */
    public String wholeState(int partition) {
        if (partitions.serves(partition)) {
            Map<?, ?> taken = (Map<?, ?>) BridgeField.RESULT.in(client.call(
                    NativeOp.TAKE_BATCH,
                    partition,
                    BridgeJson.toJson(NativeFormat.batchArgs(NativeFormat.STATE_FORMAT, true))));
            return (String) BridgeField.BATCH.in(taken);
        }
        return standbys.wholeState(partition);
    }

    /**
     * Closes {@code partition} in the core, which the caller already stopped serving: its waiting
     * requests fail as retryable (their coordinators re-queue them at the new owner); with
     * {@code export}, answers its state for the new owner.
     */
    public Map<String, Object> closePartition(int partition, boolean export) {
        // An export goes to the next owner: in the format every node reads.
        Map<String, Object> args = NativeFormat.writeArgs(peerFormat.get());
        BridgeField.EXPORT.put(args, export);
        Map<String, Object> envelope = client.call(NativeOp.CLOSE_PARTITION, partition, BridgeJson.toJson(args));
        commits.closed(partition);
        pending.failPartition(partition, () -> notServed.apply(partition));
        logger.info("stopped serving lock partition [{}]", partition);
        @SuppressWarnings("unchecked")
        Map<String, Object> snapshot =
                (Map<String, Object>) BridgeField.SNAPSHOT.in((Map<?, ?>) BridgeField.RESULT.in(envelope));
        return snapshot;
    }
}
