package org.eslm.cluster;

import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexRouting;
import org.elasticsearch.cluster.routing.IndexRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.eslm.compat.ProjectScope;

/**
 * Who owns which partition in one cluster state: partition = shard of {@link LockIndex}, owner =
 * node of its active primary, epoch = the shard's primary term. Keys map to partitions with
 * Elasticsearch's own document routing, so the mapping is the same on every node.
 */
public final class PartitionTable {
    private final IndexRouting routing;
    private final String[] owners;
    private final long[] terms;

    private PartitionTable(IndexRouting routing, String[] owners, long[] terms) {
        this.routing = routing;
        this.owners = owners;
        this.terms = terms;
    }

    /** The table of {@code state}, or {@code null} while the lock index does not exist. */
    public static PartitionTable of(ClusterState state) {
        IndexMetadata index = ProjectScope.index(state, LockIndex.NAME);
        IndexRoutingTable table = ProjectScope.routing(state, LockIndex.NAME);
        if (index == null || table == null) {
            return null;
        }
        int n = index.getNumberOfShards();
        String[] owners = new String[n];
        long[] terms = new long[n];
        for (int p = 0; p < n; p++) {
            ShardRouting primary = table.shard(p).primaryShard();
            owners[p] = primary != null && primary.active() ? primary.currentNodeId() : null;
            terms[p] = index.primaryTerm(p);
        }
        return new PartitionTable(IndexRouting.fromIndexMetadata(index), owners, terms);
    }

    public int size() {
        return owners.length;
    }

    /** The partition of a routing value (a key, a tree's first segment, or an explicit routing). */
    public int partitionOf(String routingValue) {
        return routing.getShard(routingValue, null);
    }

    /** Node id of the owner of {@code partition}, or {@code null} while none is active. */
    public String owner(int partition) {
        return owners[partition];
    }

    /** The epoch of {@code partition}: its primary term. */
    public long epoch(int partition) {
        return terms[partition];
    }
}
