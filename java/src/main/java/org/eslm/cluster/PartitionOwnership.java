package org.eslm.cluster;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.elasticsearch.core.TimeValue;
import org.eslm.service.PartitionGate;
import org.eslm.settings.LockSettings;

/**
 * Which partitions this node serves, in which epochs, and when the elected master last confirmed
 * that (docs/ARCHITECTURE.md "Partitions, owners,
 * epochs (cluster-wide correctness)"). Only {@link PartitionManager} changes
 * it; the lock service reads it through {@link PartitionGate} before any request reaches the core.
 */
public final class PartitionOwnership implements PartitionGate {
    /**
     * How long an ownership confirmation stays good. A partition whose confirmation is older
     * changes nothing: this node may be cut off, and a new owner may already serve it. Well below
     * any recovery grace (at least the lease maximum), below the master's silent-owner failover
     * ({@link LockSettings#SILENT_OWNER_FAILOVER_MIN}), and six times {@link OwnerChecks#INTERVAL},
     * so a few lost answers do not stop granting.
     */
    public static final TimeValue OWNERSHIP_WINDOW = LockSettings.OWNERSHIP_WINDOW;

    /** Partitions this node serves, with their epochs. */
    private final Map<Integer, Long> open = new ConcurrentHashMap<>();
    /** {@link System#nanoTime()} of the question the master last answered "yours" to, per partition. */
    private final Map<Integer, Long> confirmedAt = new ConcurrentHashMap<>();
    /**
     * Per partition, the epoch and {@link System#nanoTime()} send of the last batch every in-sync
     * copy took. Kept by epoch, not cleared at an opening: the first batch of an opening may be
     * answered before the opening is recorded here.
     */
    private final Map<Integer, Renewal> renewedAt = new ConcurrentHashMap<>();

    private record Renewal(long epoch, long sentAt) {
        Renewal later(Renewal other) {
            return other.epoch != epoch ? other : other.sentAt > sentAt ? other : this;
        }
    }
    /** Whether copies renew the owners' leases ({@link #copyLeases()}); set from each cluster state. */
    private volatile boolean copyLeases;

    @Override
    public boolean serves(int partition) {
        return open.containsKey(partition);
    }

    @Override
    public boolean confirmed(int partition) {
        if (copyLeases) {
            Renewal at = renewedAt.get(partition);
            return at != null
                    && Long.valueOf(at.epoch).equals(open.get(partition))
                    && System.nanoTime() - at.sentAt < LockSettings.COPY_LEASE.nanos();
        }
        Long at = confirmedAt.get(partition);
        return at != null && System.nanoTime() - at < OWNERSHIP_WINDOW.nanos();
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
    public void renewedByCopies(int partition, long epoch, long sentAtNanos) {
        renewedAt.merge(partition, new Renewal(epoch, sentAtNanos), Renewal::later);
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
        renewedAt.remove(partition); // its batch failed: the next one that commits renews it
        open.put(partition, epoch);
    }

    /** Stops serving {@code partition}; whether it was served. */
    boolean closed(int partition) {
        if (open.remove(partition) == null) {
            return false;
        }
        confirmedAt.remove(partition);
        renewedAt.remove(partition);
        return true;
    }

    /** Records that the master confirmed this node's ownership of {@code partition} as asked at {@code askedAtNanos}. */
    void confirm(int partition, long askedAtNanos) {
        confirmedAt.merge(partition, askedAtNanos, Math::max);
    }
}
