package org.eslm.cluster;

import java.util.ArrayList;
import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.ElasticsearchTimeoutException;
import org.elasticsearch.ExceptionsHelper;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.action.shard.ShardStateAction;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexRoutingTable;
import org.elasticsearch.cluster.routing.IndexShardRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.transport.ConnectTransportException;
import org.elasticsearch.transport.NodeDisconnectedException;
import org.elasticsearch.transport.NodeNotConnectedException;
import org.elasticsearch.transport.ReceiveTimeoutTransportException;
import org.eslm.compat.ProjectScope;

/**
 * A copy that did not answer a batch in time lives on a node that is silent (frozen, stalled, cut
 * off): the other lock partitions' replicas on that node will not answer their owners either. They
 * are failed with it, in the same moment, rather than one by one as each owner's batch times out
 * (docs/ARCHITECTURE.md "Silent owners", "a silent replica"): the master takes shard failures queued
 * together into one cluster state, while a failure queued after it waits until that state's
 * publication is over, and a publication waits for every node, the silent one too, up to
 * {@code cluster.publish.timeout} (30 s). Failing a copy never lets two owners serve; a copy failed
 * while it was in fact healthy recovers anew.
 */
final class SilentCopyNode {
    private static final Logger logger = LogManager.getLogger(SilentCopyNode.class);

    private SilentCopyNode() {}

    /** Whether {@code e}, a batch's failure on a copy, says its node did not answer (rather than refused). */
    static boolean silent(Exception e) {
        return ExceptionsHelper.unwrap(
                        e,
                        ElasticsearchTimeoutException.class,
                        ReceiveTimeoutTransportException.class,
                        ConnectTransportException.class,
                        NodeDisconnectedException.class,
                        NodeNotConnectedException.class)
                != null;
    }

    /**
     * The started replicas, on the node of {@code failed}, of the other lock partitions whose
     * primary is started on another node in {@code state}: failing one loses nothing, its primary
     * holds the partition. (A partition whose primary is not started keeps its replica: it may be
     * the copy to promote.)
     */
    static List<ShardRouting> siblings(ClusterState state, ShardRouting failed) {
        IndexRoutingTable routing = ProjectScope.routing(state, LockIndex.NAME);
        List<ShardRouting> out = new ArrayList<>();
        if (routing == null || failed.currentNodeId() == null) {
            return out;
        }
        for (int p = 0; p < routing.size(); p++) {
            IndexShardRoutingTable shard = routing.shard(p);
            ShardRouting primary = shard.primaryShard();
            if (p == failed.shardId().id()
                    || primary == null
                    || primary.started() == false
                    || failed.currentNodeId().equals(primary.currentNodeId())) {
                continue;
            }
            for (ShardRouting replica : shard.replicaShards()) {
                if (replica.started() && failed.currentNodeId().equals(replica.currentNodeId())) {
                    out.add(replica);
                }
            }
        }
        return out;
    }

    /**
     * Fails {@link #siblings} of {@code failed} through the master, each with its partition's primary
     * term, when {@code cause} says the node did not answer.
     */
    static void failSiblings(ClusterState state, ShardRouting failed, Exception cause, ShardStateAction shardStates) {
        if (silent(cause) == false) {
            return;
        }
        IndexMetadata index = ProjectScope.index(state, LockIndex.NAME);
        if (index == null) {
            return;
        }
        for (ShardRouting copy : siblings(state, failed)) {
            String why = "lock partition [" + copy.shardId().id() + "]: its copy's node [" + failed.currentNodeId()
                    + "] did not answer a batch of lock partition ["
                    + failed.shardId().id() + "] in time";
            logger.warn(why + "; failing this copy with it");
            shardStates.remoteShardFailed(
                    copy.shardId(),
                    copy.allocationId().getId(),
                    index.primaryTerm(copy.shardId().id()),
                    true,
                    why,
                    new ElasticsearchException(why),
                    ActionListener.wrap(
                            r -> {},
                            e -> logger.debug(
                                    "failing copy [{}] of {}: {}",
                                    copy.allocationId().getId(),
                                    copy.shardId(),
                                    e.getMessage())));
        }
    }
}
