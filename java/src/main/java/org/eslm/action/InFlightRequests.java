package org.eslm.action;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntToLongFunction;
import org.elasticsearch.cluster.ClusterChangedEvent;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.ClusterStateListener;
import org.eslm.cluster.PartitionTable;

/**
 * The requests this node sent to a partition's owner and still awaits. When a cluster state gives
 * the partition a new epoch (a promotion), each is re-routed at once instead of waiting for an
 * old owner that may never answer: the master fails over a frozen or cut-off owner in seconds
 * while the node stays in the cluster (docs/ARCHITECTURE.md "Silent owners"), so no connection
 * closes to tell. Whatever the old owner still does with the request cannot commit: its copies
 * refuse its batches in the old epoch. A planned move keeps the epoch and its old owner answers
 * (it hands over), so those requests wait for that answer.
 */
final class InFlightRequests implements ClusterStateListener {
    /** The epoch of a partition the cluster state no longer has (or before the lock index exists). */
    static final long GONE = -1;

    /** One request sent to the owner of {@code partition} in {@code epoch}; {@code moved} re-routes it. */
    static final class Sent {
        final int partition;
        final long epoch;
        final Runnable moved;

        Sent(int partition, long epoch, Runnable moved) {
            this.partition = partition;
            this.epoch = epoch;
            this.moved = moved;
        }
    }

    private final Set<Sent> sent = ConcurrentHashMap.newKeySet();

    Sent add(int partition, long epoch, Runnable moved) {
        Sent s = new Sent(partition, epoch, moved);
        sent.add(s);
        return s;
    }

    /**
     * Looks at {@code current} once more for {@code s}, just added: a cluster state applied after
     * the attempt read its epoch but before it was added was told to {@link #clusterChanged}
     * without it, and no later state may come (the old owner stays frozen in the cluster).
     * Answers whether {@code s} was re-routed, so the caller sends nothing.
     */
    boolean rerouteIfMoved(Sent s, ClusterState current) {
        return rerouteIfMoved(s, epochs(PartitionTable.of(current)));
    }

    /**
     * Re-routes {@code s} if {@code epochs} gives its partition a newer epoch than it was sent in,
     * or none. An older one is not a move: the master sends to a copy it is promoting in the
     * newer epoch before its own applied state shows it ({@code PendingPromotions}).
     */
    boolean rerouteIfMoved(Sent s, IntToLongFunction epochs) {
        long now = epochs.applyAsLong(s.partition);
        if ((now > s.epoch || now == GONE) && sent.remove(s)) {
            s.moved.run();
            return true;
        }
        return false;
    }

    void remove(Sent s) {
        sent.remove(s);
    }

    int size() {
        return sent.size();
    }

    @Override
    public void clusterChanged(ClusterChangedEvent event) {
        if (sent.isEmpty() == false) {
            rerouteMoved(epochs(PartitionTable.of(event.state())));
        }
    }

    /** Re-routes every request whose partition {@code epochs} gives a newer epoch than it was sent in, or none. */
    void rerouteMoved(IntToLongFunction epochs) {
        for (Sent s : sent) {
            rerouteIfMoved(s, epochs);
        }
    }

    static IntToLongFunction epochs(PartitionTable table) {
        return partition -> table == null || partition >= table.size() ? GONE : table.epoch(partition);
    }
}
