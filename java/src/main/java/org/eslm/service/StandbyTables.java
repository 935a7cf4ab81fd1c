package org.eslm.service;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;

/**
 * The standby tables this node keeps as a replica of partitions (docs/ARCHITECTURE.md
 * "Replication"): the primary's batches applied to them, in order; a standby becomes the live
 * partition when this copy becomes the primary ({@link PartitionLifecycle#openFromStandby}). The tables
 * live in the core; this tracks which partitions have one.
 */
public final class StandbyTables {
    private final CoreClient client;
    /** Per partition: {@link System#nanoTime()} of the last batch or heartbeat this copy acknowledged. */
    private final Map<Integer, Long> acknowledged = new ConcurrentHashMap<>();
    /** Partitions with a standby table here (this copy received a whole state). */
    private final Set<Integer> based = ConcurrentHashMap.newKeySet();
    /** Per partition: how long this copy's last recovery waited for its owner's whole state. */
    private final Map<Integer, Long> recoveryWaitsMillis = new ConcurrentHashMap<>();

    StandbyTables(CoreClient client) {
        this.client = client;
    }

    /**
     * Applies a batch of the primary to this node's standby of {@code partition}. Answers whether
     * it was applied: a change batch reaching a copy without a whole state yet is not (the copy
     * waits for one).
     *
     * @throws IllegalArgumentException when the batch does not follow the standby (a batch was
     *     lost, or another epoch): the copy must get a whole state again
     */
    public boolean apply(int partition, String batchJson) {
        Map<?, ?> result = (Map<?, ?>) BridgeField.RESULT.in(client.call(NativeOp.STANDBY_APPLY, partition, batchJson));
        boolean applied = Boolean.TRUE.equals(BridgeField.APPLIED.in(result));
        if (applied) {
            based.add(partition);
        }
        return applied;
    }

    /**
     * Installs {@code stateJson}, the primary's live state fetched by this copy to catch up
     * (cluster.PartitionStateAction), unless the standby is already as new (a batch applied
     * meanwhile is never undone). Answers whether this node now has a standby.
     */
    public boolean catchUp(int partition, String stateJson) {
        return apply(partition, "{\"catch_up\":" + stateJson + "}");
    }

    /**
     * This copy answered a batch or heartbeat of {@code partition}'s owner (docs/ARCHITECTURE.md
     * "Silent owners"): the owner may serve until {@link LockSettings#COPY_LEASE} after that batch's
     * send, so a promotion of this copy waits until {@link #promotionWait}.
     */
    public void acknowledged(int partition) {
        acknowledged.merge(partition, System.nanoTime(), Math::max);
    }

    /**
     * How much longer a promotion of this copy of {@code partition} must wait, in nanoseconds (0
     * when none): until {@link LockSettings#COPY_LEASE}, on any clock, after the last batch this copy
     * acknowledged, when the old owner's lease has surely run out.
     */
    public long promotionWait(int partition) {
        Long at = acknowledged.get(partition);
        if (at == null) {
            return 0;
        }
        return Math.max(0, at + LockSettings.onAnyClock(LockSettings.COPY_LEASE).nanos() - System.nanoTime());
    }

    /** Whether this node has a standby of {@code partition} (it received a whole state). */
    public boolean has(int partition) {
        return based.contains(partition);
    }

    /** Forgets this node's standby of {@code partition} (its copy left this node, or is recovering anew). */
    public void drop(int partition) {
        based.remove(partition);
        client.call(NativeOp.STANDBY_EXPORT, partition, "{\"drop\":true}");
    }

    /** The standby of {@code partition} became the live partition (the core consumed it). */
    void promoted(int partition) {
        based.remove(partition);
    }

    /** The standby's whole state as a batch ({@code {"full": ..}}), or {@code null} without one. */
    String wholeState(int partition) {
        Object full = BridgeField.FULL.in(
                (Map<?, ?>) BridgeField.RESULT.in(client.call(NativeOp.STANDBY_EXPORT, partition, "{}")));
        return full == null ? null : BridgeJson.batch(true, full);
    }

    /**
     * Records that this copy's recovery of {@code partition} waited {@code millis} for the
     * owner's whole state (cluster.LockShardListener): the plugin's own share of a recovery,
     * apart from Elasticsearch's (diagnostics; the fault test bounds it).
     */
    public void recoveryWaited(int partition, long millis) {
        recoveryWaitsMillis.put(partition, millis);
    }

    /** {@link #recoveryWaited} per partition, in order, keyed by the partition's number as text (diagnostics). */
    Map<String, Long> recoveryWaits() {
        Map<String, Long> waits = new LinkedHashMap<>();
        new TreeMap<>(recoveryWaitsMillis).forEach((partition, millis) -> waits.put(String.valueOf(partition), millis));
        return waits;
    }

    /** The partitions with a standby here, in order (diagnostics). */
    SortedSet<Integer> partitions() {
        return new TreeSet<>(based);
    }
}
