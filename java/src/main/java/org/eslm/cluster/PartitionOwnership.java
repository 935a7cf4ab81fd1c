package org.eslm.cluster;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.elasticsearch.core.TimeValue;
import org.eslm.service.PartitionGate;

/**
 * Which partitions this node serves, in which epochs, and when the elected master last confirmed
 * that (docs/ARCHITECTURE.md "Partitions, owners,
 * epochs (cluster-wide correctness)"). Only {@link PartitionManager} changes
 * it; the lock service reads it through {@link PartitionGate} before any request reaches the core.
 */
public final class PartitionOwnership implements PartitionGate {
    /**
     * How long an ownership confirmation stays good. A partition whose confirmation is older
     * changes nothing: this node may be cut off, and a new owner may already be counting down its
     * recovery grace. Well below any recovery grace (at least the lease maximum), and six times
     * {@link OwnerChecks#INTERVAL}, so a few lost answers do not stop granting.
     */
    public static final TimeValue OWNERSHIP_WINDOW = TimeValue.timeValueSeconds(3);

    /** Partitions this node serves, with their epochs. */
    private final Map<Integer, Long> open = new ConcurrentHashMap<>();
    /** {@link System#nanoTime()} of the question the master last answered "yours" to, per partition. */
    private final Map<Integer, Long> confirmedAt = new ConcurrentHashMap<>();

    @Override
    public boolean serves(int partition) {
        return open.containsKey(partition);
    }

    @Override
    public boolean confirmed(int partition) {
        Long at = confirmedAt.get(partition);
        return at != null && System.nanoTime() - at < OWNERSHIP_WINDOW.nanos();
    }

    @Override
    public Set<Integer> served() {
        return open.keySet();
    }

    /** The partitions this node serves, with their epochs (a copy). */
    public Map<Integer, Long> epochs() {
        return Map.copyOf(open);
    }

    /** Records {@code partition} as served in {@code epoch}, confirmed now: opened from the state the master just published. */
    void opened(int partition, long epoch) {
        confirmedAt.put(partition, System.nanoTime());
        open.put(partition, epoch);
    }

    /**
     * Records {@code partition} as served in {@code epoch} but not confirmed: reopened from this
     * node's own cluster state, which may be stale; it serves once the master confirms it.
     */
    void openedUnconfirmed(int partition, long epoch) {
        confirmedAt.remove(partition);
        open.put(partition, epoch);
    }

    /** Stops serving {@code partition}; whether it was served. */
    boolean closed(int partition) {
        if (open.remove(partition) == null) {
            return false;
        }
        confirmedAt.remove(partition);
        return true;
    }

    /** Records that the master confirmed this node's ownership of {@code partition} as asked at {@code askedAtNanos}. */
    void confirm(int partition, long askedAtNanos) {
        confirmedAt.merge(partition, askedAtNanos, Math::max);
    }
}
