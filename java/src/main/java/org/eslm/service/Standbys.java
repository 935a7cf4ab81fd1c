package org.eslm.service;

import java.util.Map;
import java.util.SortedSet;

/**
 * The standby tables this node keeps as a replica of lock partitions, and when it last answered
 * each partition's owner (docs/ARCHITECTURE.md "Replication", "Silent owners"). The tables live in
 * the core. Built by {@link ReplicationParts} ({@code org.eslm.replication.StandbyTables}), so that
 * the service and the cluster code stay below the replication code.
 */
public interface Standbys {
    /**
     * Applies a batch of the primary to this node's standby of {@code partition}. Answers whether
     * it was applied: a change batch reaching a copy without a whole state yet is not (the copy
     * waits for one).
     *
     * @throws IllegalArgumentException when the batch does not follow the standby (a batch was
     *     lost, or another epoch): the copy must get a whole state again
     */
    boolean apply(int partition, String batchJson);

    /**
     * Installs {@code stateJson}, the primary's live state fetched by this copy to catch up
     * (cluster.PartitionStateAction), unless the standby is already as new (a batch applied
     * meanwhile is never undone). Answers whether this node now has a standby.
     */
    boolean catchUp(int partition, String stateJson);

    /**
     * This copy answered a batch or heartbeat of {@code partition}'s owner (docs/ARCHITECTURE.md
     * "Silent owners"): the owner may serve on it, so a promotion of this copy waits it out
     * ({@link #promotionWaitMs}).
     */
    void acknowledged(int partition);

    /**
     * How many milliseconds a promotion of this copy of {@code partition} must still wait (0 when
     * none): until the old owner's lease has surely run out, counted from the last batch this copy
     * acknowledged (the core's ownership protocol decides); 0 at once when {@code oldOwnerClosed}.
     */
    long promotionWaitMs(int partition, boolean oldOwnerClosed);

    /** Whether this node has a standby of {@code partition} (it received a whole state). */
    boolean has(int partition);

    /** Forgets this node's standby of {@code partition} (its copy left this node, or is recovering anew). */
    void drop(int partition);

    /** The standby of {@code partition} became the live partition (the core consumed it). */
    void promoted(int partition);

    /** The standby's whole state as a batch ({@code {"full": ..}}), or {@code null} without one. */
    String wholeState(int partition);

    /**
     * Records that this copy's recovery of {@code partition} waited {@code millis} for the
     * owner's whole state (replication.LockShardListener): the plugin's own share of a recovery,
     * apart from Elasticsearch's (diagnostics; the fault test bounds it).
     */
    void recoveryWaited(int partition, long millis);

    /** {@link #recoveryWaited} per partition, in order, keyed by the partition's number as text (diagnostics). */
    Map<String, Long> recoveryWaits();

    /** The partitions with a standby here, in order (diagnostics). */
    SortedSet<Integer> partitions();
}
