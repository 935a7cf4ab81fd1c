package org.eslm.cluster;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which copies of each partition this node, as its primary, last sent the whole state to. A copy
 * the routing table shows but this set lacks (a new replica, a relocation target) gets the whole
 * state at the owner's next check ({@link PartitionManager}), so it has a standby table before it
 * can be promoted or take the partition over (docs/ARCHITECTURE.md "Replication").
 */
public final class PartitionCopies {
    private final Map<Integer, Set<String>> based = new ConcurrentHashMap<>();

    /** The whole state of {@code partition} went to the copies {@code allocationIds}. */
    public void based(int partition, Set<String> allocationIds) {
        based.put(partition, allocationIds);
    }

    /** Whether a copy in {@code allocationIds} has not had the whole state from this node. */
    boolean missing(int partition, Set<String> allocationIds) {
        return based.getOrDefault(partition, Set.of()).containsAll(allocationIds) == false;
    }

    /** Whether the copy {@code allocationId} had the whole state of {@code partition} from this node. */
    public boolean synced(int partition, String allocationId) {
        return based.getOrDefault(partition, Set.of()).contains(allocationId);
    }

    /** This node stopped serving {@code partition}: a later owner starts over. */
    void forget(int partition) {
        based.remove(partition);
    }
}
