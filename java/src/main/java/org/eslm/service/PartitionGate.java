package org.eslm.service;

import java.util.Set;

/**
 * What the lock service must know about partition ownership before it lets a request reach the
 * core: whether this node serves a partition, and whether its right to serve it is current (its
 * copies acknowledged a recent batch, or the elected master confirmed it recently). The bookkeeping lives with the cluster code ({@code org.eslm.cluster.PartitionOwnership},
 * docs/ARCHITECTURE.md "Partitions, owners, epochs (cluster-wide correctness)"); this interface keeps the service below it.
 */
public interface PartitionGate {
    /** Whether this node serves {@code partition}. */
    boolean serves(int partition);

    /**
     * Whether this node's right to serve {@code partition} is current, so that it may change
     * anything there (grant, expire, hand to a waiter) or show it: renewed by its copies within
     * {@link LockSettings#COPY_LEASE} when copy leases are in force, else confirmed by the master
     * within {@link LockSettings#OWNERSHIP_WINDOW} (docs/ARCHITECTURE.md "Silent owners").
     */
    boolean confirmed(int partition);

    /**
     * Whether owners' leases come from their copies' acknowledgements: replicated partitions, and
     * every node of the cluster runs a plugin that sends and answers heartbeats.
     */
    boolean copyLeases();

    /**
     * A batch of {@code partition} in {@code epoch} sent at {@code sentAtNanos} ({@link
     * System#nanoTime()}) reached every in-sync copy, or those that did not take it are out of the
     * in-sync set for good: no copy that can be promoted stopped acknowledging this owner before.
     */
    void renewedByCopies(int partition, long epoch, long sentAtNanos);

    /** The partitions this node serves now. */
    Set<Integer> served();
}
