package org.eslm.cluster;

import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexRouting;
import org.elasticsearch.cluster.routing.IndexRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.cluster.routing.UnassignedInfo;
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
    /** Per partition without an owner that Elasticsearch cannot assign on its own: why (else null). */
    private final String[] stuck;

    private PartitionTable(IndexRouting routing, String[] owners, long[] terms, String[] stuck) {
        this.routing = routing;
        this.owners = owners;
        this.terms = terms;
        this.stuck = stuck;
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
        String[] stuck = new String[n];
        for (int p = 0; p < n; p++) {
            ShardRouting primary = table.shard(p).primaryShard();
            owners[p] = primary != null && primary.active() ? primary.currentNodeId() : null;
            terms[p] = index.primaryTerm(p);
            stuck[p] = primary == null ? null : stuck(primary.unassignedInfo());
        }
        return new PartitionTable(IndexRouting.fromIndexMetadata(index), owners, terms, stuck);
    }

    /**
     * Why an unassigned primary stays so until an operator acts: Elasticsearch found no copy it
     * may use (e.g. the only copy's state log is damaged, docs/RELIABILITY.md "A damaged state
     * log"). {@code null} for a primary being assigned, or promoted, as usual.
     */
    private static String stuck(UnassignedInfo info) {
        if (info == null || info.lastAllocationStatus() != UnassignedInfo.AllocationStatus.NO_VALID_SHARD_COPY) {
            return null;
        }
        return "no valid copy of the lock partition can be assigned: " + firstReason(info.details());
    }

    /**
     * What every refusal of a damaged state log says ({@code replication.LockShardListener}), so
     * that {@link #firstReason} finds it in an allocation failure's details.
     */
    public static final String REFUSAL_MARK = "This copy is not used:";

    /**
     * The reason a person needs from an allocation failure's details (which hold the whole stack
     * trace): the line of the plugin's refusal of a damaged state log when it is there
     * (LockShardListener), else the first line.
     */
    static String firstReason(String details) {
        if (details == null) {
            return "no details";
        }
        int log = details.indexOf(REFUSAL_MARK);
        int from = log < 0 ? 0 : Math.max(0, details.lastIndexOf("lock partition [", log));
        int to = details.indexOf('\n', from);
        return details.substring(from, to < 0 ? details.length() : to);
    }

    public int size() {
        return owners.length;
    }

    /** The partition of a routing value (a key, a tree's first segment, or an explicit routing). */
    public int partitionOf(String routingValue) {
        return routing.getShard(routingValue, null);
    }

    /**
     * A routing value that lands in {@code partition}: how a request addressed to a partition
     * rather than to a key (the listing of its groups, docs/API.md "Groups") is routed like any
     * other, and re-routed when the partition moves. The first of {@code "0"}, {@code "1"}, ...
     * that does, the same on every node.
     */
    public String routingValueOf(int partition) {
        for (int i = 0; i < 1_000 * size(); i++) {
            String value = Integer.toString(i);
            if (partitionOf(value) == partition) {
                return value;
            }
        }
        throw new IllegalStateException("no routing value found for lock partition [" + partition + "]");
    }

    /** Node id of the owner of {@code partition}, or {@code null} while none is active. */
    public String owner(int partition) {
        return owners[partition];
    }

    /**
     * Why {@code partition} has no owner and will not get one without an operator, or {@code null}
     * (it has an owner, or Elasticsearch is assigning one).
     */
    public String unavailable(int partition) {
        return stuck[partition];
    }

    /** The epoch of {@code partition}: its primary term. */
    public long epoch(int partition) {
        return terms[partition];
    }
}
