package org.eslm.service;

import java.util.Set;

/**
 * Which partitions this node serves, as the cluster code opened them ({@code
 * org.eslm.cluster.PartitionOwnership}), so that the lock service routes no request to a partition
 * it does not serve (docs/ARCHITECTURE.md "Partitions, owners, epochs (cluster-wide
 * correctness)"). Whether its right to serve one is current is the core's to decide, at every
 * operation ({@link OwnershipProtocol}, docs/ARCHITECTURE.md "Silent owners").
 */
public interface PartitionGate {
    /** Whether this node serves {@code partition}. */
    boolean serves(int partition);

    /**
     * Whether owners' leases come from their copies' acknowledgements: replicated partitions, and
     * every node of the cluster runs a plugin that sends and answers heartbeats.
     */
    boolean copyLeases();

    /** The partitions this node serves now. */
    Set<Integer> served();
}
