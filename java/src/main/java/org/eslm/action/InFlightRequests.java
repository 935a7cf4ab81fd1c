package org.eslm.action;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.elasticsearch.cluster.ClusterChangedEvent;
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

    void remove(Sent s) {
        sent.remove(s);
    }

    @Override
    public void clusterChanged(ClusterChangedEvent event) {
        if (sent.isEmpty()) {
            return;
        }
        PartitionTable table = PartitionTable.of(event.state());
        for (Sent s : sent) {
            boolean promoted = table == null || s.partition >= table.size() || table.epoch(s.partition) != s.epoch;
            if (promoted && sent.remove(s)) {
                s.moved.run();
            }
        }
    }
}
