package org.eslm.cluster;

import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.cluster.routing.RoutingNode;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.cluster.routing.allocation.RoutingAllocation;
import org.elasticsearch.cluster.routing.allocation.decider.AllocationDecider;
import org.elasticsearch.cluster.routing.allocation.decider.Decision;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.Settings;
import org.eslm.compat.ProjectScope;
import org.eslm.settings.LockSettings;

/**
 * Keeps the copies of the lock partitions off the elected master whenever enough other data nodes
 * can hold them (docs/ARCHITECTURE.md "Silent owners"). A silent master is removed only by an
 * election (30 s and more), and it applies the cluster states it publishes last, after every
 * follower or the publication timeout: a lock copy on it would gate the locks on exactly what
 * the plugin avoids waiting for — a primary there is failed over by no one (it watches the other
 * owners), a replica there is promoted only when the frozen master gets round to applying the
 * state, and a replica there that stops answering stalls its owner's batches until a master can
 * take it out of the in-sync set.
 *
 * <p>Said as an allocation decider, Elasticsearch moves the copies itself: after an election that
 * puts the master on a node with a copy, the primary moves by the planned hand-over (no holder
 * lost, tokens continue) and the replica by a recovery. With fewer other data nodes than copies
 * (one or two nodes) the master holds a copy as before. Off with
 * {@code locks.allocation.avoid_master: false}.
 */
public final class LockCopiesOffMaster extends AllocationDecider {
    static final String NAME = "lock_copies_off_master";

    private volatile boolean enabled;

    public LockCopiesOffMaster(Settings settings, ClusterSettings clusterSettings) {
        this.enabled = LockSettings.AVOID_MASTER.get(settings);
        clusterSettings.addSettingsUpdateConsumer(LockSettings.AVOID_MASTER, on -> this.enabled = on);
    }

    @Override
    public Decision canAllocate(ShardRouting shard, RoutingNode node, RoutingAllocation allocation) {
        return decide(shard.getIndexName(), node, allocation);
    }

    @Override
    public Decision canRemain(IndexMetadata index, ShardRouting shard, RoutingNode node, RoutingAllocation allocation) {
        return decide(shard.getIndexName(), node, allocation);
    }

    /**
     * A primary whose only valid copy sits on the master (say, after a full restart) is allocated
     * there all the same: a lock partition without an owner is worse than one on the master, and
     * the copies move off once the replica is in sync.
     */
    @Override
    public Decision canForceAllocatePrimary(ShardRouting shard, RoutingNode node, RoutingAllocation allocation) {
        return Decision.YES;
    }

    private Decision decide(String index, RoutingNode node, RoutingAllocation allocation) {
        if (enabled == false || LockIndex.NAME.equals(index) == false) {
            return Decision.YES;
        }
        DiscoveryNodes nodes = allocation.getClusterState().nodes();
        String master = nodes.getMasterNodeId();
        IndexMetadata metadata = ProjectScope.index(allocation.getClusterState(), index);
        if (master == null || master.equals(node.nodeId()) == false || metadata == null) {
            return Decision.YES;
        }
        int copies = 1 + metadata.getNumberOfReplicas();
        int others = nodes.getDataNodes().size() - (nodes.getDataNodes().containsKey(master) ? 1 : 0);
        if (others < copies) {
            return allocation.decision(
                    Decision.YES,
                    NAME,
                    "the elected master may hold a lock partition copy: [%d] other data nodes for [%d] copies",
                    others,
                    copies);
        }
        return allocation.decision(
                Decision.NO,
                NAME,
                "lock partition copies stay off the elected master while [%d] other data nodes can hold its [%d]"
                        + " copies [%s=true]",
                others,
                copies,
                LockSettings.AVOID_MASTER.getKey());
    }
}
