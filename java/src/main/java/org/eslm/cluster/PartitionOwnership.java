package org.eslm.cluster;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.eslm.service.PartitionGate;

/**
 * Which partitions this node serves, in which epochs (docs/ARCHITECTURE.md "Partitions, owners,
 * epochs (cluster-wide correctness)"). Only {@link PartitionManager} changes it; the lock service
 * reads it through {@link PartitionGate} before a request reaches the core. Whether this node's
 * right to serve a partition is current is not kept here: the core decides it at every operation
 * (service.OwnershipProtocol, docs/ARCHITECTURE.md "Silent owners").
 */
public final class PartitionOwnership implements PartitionGate {
    /** Partitions this node serves, with their epochs. */
    private final Map<Integer, Long> open = new ConcurrentHashMap<>();
    /** Whether copies renew the owners' leases ({@link #copyLeases()}); set from each cluster state. */
    private volatile boolean copyLeases;

    @Override
    public boolean serves(int partition) {
        return open.containsKey(partition);
    }

    @Override
    public boolean copyLeases() {
        return copyLeases;
    }

    /** Whether copies renew owners' leases from now on (see {@link PartitionGate#copyLeases()}). */
    void copyLeases(boolean inForce) {
        copyLeases = inForce;
    }

    @Override
    public Set<Integer> served() {
        return open.keySet();
    }

    /** The partitions this node serves, with their epochs (a copy). */
    public Map<Integer, Long> epochs() {
        return Map.copyOf(open);
    }

    /** Records {@code partition} as served in {@code epoch} (the core opened it with its lease). */
    void opened(int partition, long epoch) {
        open.put(partition, epoch);
    }

    /** Stops serving {@code partition}; whether it was served. */
    boolean closed(int partition) {
        return open.remove(partition) != null;
    }
}
