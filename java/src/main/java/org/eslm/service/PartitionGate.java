package org.eslm.service;

import java.util.Set;

/**
 * What the lock service must know about partition ownership before it lets a request reach the
 * core: whether this node serves a partition, and whether the elected master confirmed that
 * recently. The bookkeeping lives with the cluster code ({@code org.eslm.cluster.PartitionOwnership},
 * docs/ARCHITECTURE.md "Partitions, owners, epochs (cluster-wide correctness)"); this interface keeps the service below it.
 */
public interface PartitionGate {
    /** Whether this node serves {@code partition}. */
    boolean serves(int partition);

    /**
     * Whether the master confirmed this node's ownership of {@code partition} recently enough that
     * it may change anything there (grant, expire, hand to a waiter).
     */
    boolean confirmed(int partition);

    /** The partitions this node serves now. */
    Set<Integer> served();
}
