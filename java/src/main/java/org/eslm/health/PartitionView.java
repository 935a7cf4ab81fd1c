package org.eslm.health;

import java.util.Map;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexRoutingTable;
import org.elasticsearch.cluster.routing.IndexShardRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.eslm.cluster.LockIndex;
import org.eslm.cluster.PartitionTable;
import org.eslm.compat.ProjectScope;

/**
 * One lock partition as the health indicator sees it: from the cluster state, its owner (the
 * node of its active primary, {@code null} without one), why Elasticsearch cannot assign it
 * ({@code stuck}), and its replicas wanted and started; from its owner's latest report
 * ({@link OwnerReports}), how the owner serves it ({@code null}: no fresh report).
 *
 * @param served what the owner reported about this partition; {@code null} when the owner
 *     reported that it does not serve it, or did not report (see {@code reported})
 */
record PartitionView(
        int id,
        String owner,
        String stuck,
        int replicasWanted,
        int replicasStarted,
        boolean reported,
        OwnerReports.Served served) {

    /** The views of every partition of the lock index in {@code state}; {@code null} while the index does not exist. */
    static PartitionView[] of(ClusterState state, Map<String, OwnerReports.Report> reports) {
        PartitionTable table = PartitionTable.of(state);
        IndexMetadata index = ProjectScope.index(state, LockIndex.NAME);
        IndexRoutingTable routing = ProjectScope.routing(state, LockIndex.NAME);
        if (table == null || index == null || routing == null) {
            return null;
        }
        PartitionView[] views = new PartitionView[table.size()];
        for (int p = 0; p < views.length; p++) {
            IndexShardRoutingTable shard = routing.shard(p);
            int started = 0;
            for (ShardRouting replica : shard.replicaShards()) {
                started += replica.started() ? 1 : 0;
            }
            String owner = table.owner(p);
            OwnerReports.Report report = owner == null ? null : reports.get(owner);
            views[p] = new PartitionView(
                    p,
                    owner,
                    table.unavailable(p),
                    index.getNumberOfReplicas(),
                    started,
                    report != null,
                    report == null ? null : report.partitions().get(p));
        }
        return views;
    }
}
