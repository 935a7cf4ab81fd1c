package org.eslm.cluster;

import java.util.Set;
import java.util.stream.Collectors;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.index.IndexService;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.indices.IndicesService;
import org.eslm.compat.ProjectScope;

/** Finding the shards of the lock index: this node's copy of a partition, and a partition's copies. */
public final class LockShards {
    private LockShards() {}

    /** This node's copy of {@code partition}'s shard in {@code state}, or {@code null} when it has none. */
    public static IndexShard local(IndicesService indices, ClusterState state, int partition) {
        IndexMetadata index = ProjectScope.index(state, LockIndex.NAME);
        IndexService service = index == null ? null : indices.indexService(index.getIndex());
        return service == null ? null : service.getShardOrNull(partition);
    }

    /**
     * The allocation ids of {@code partition}'s copies other than its primary, relocation targets
     * included: the copies a batch must reach. Empty while the lock index does not exist.
     */
    public static Set<String> otherCopies(ClusterState state, int partition) {
        IndexRoutingTable table = ProjectScope.routing(state, LockIndex.NAME);
        if (table == null || partition >= table.size()) {
            return Set.of();
        }
        ShardRouting primary = table.shard(partition).primaryShard();
        String primaryId = primary == null || primary.allocationId() == null
                ? ""
                : primary.allocationId().getId();
        return table.shard(partition).assignedShards().stream()
                .map(s -> s.allocationId().getId())
                .filter(id -> id.equals(primaryId) == false)
                .collect(Collectors.toUnmodifiableSet());
    }
}
