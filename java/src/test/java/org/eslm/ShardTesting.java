package org.eslm;

import java.util.Set;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexShardRoutingTable;
import org.elasticsearch.cluster.routing.RecoverySource;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.cluster.routing.UnassignedInfo;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.index.IndexVersion;
import org.elasticsearch.index.shard.ShardId;
import org.eslm.cluster.LockIndex;

/**
 * Copies, shard routing tables and lock-index metadata as the master's cluster state holds them,
 * for the unit tests of what the master fails (a silent copy, a silent owner's primary) and of
 * what an owner reads back from a committed state. Building index metadata needs Elasticsearch's
 * logging: call {@link NativeTestSupport#setUp()} first.
 */
public final class ShardTesting {
    private ShardTesting() {}

    /** A copy of {@code shard} on {@code node}: a primary or a replica, started or still initializing. */
    public static ShardRouting copy(ShardId shard, boolean primary, String node, boolean started) {
        RecoverySource source =
                primary ? RecoverySource.EmptyStoreRecoverySource.INSTANCE : RecoverySource.PeerRecoverySource.INSTANCE;
        ShardRouting copy = ShardRouting.newUnassigned(
                        shard,
                        primary,
                        source,
                        new UnassignedInfo(UnassignedInfo.Reason.INDEX_CREATED, "test"),
                        ShardRouting.Role.DEFAULT)
                .initialize(node, null, 0);
        return started ? copy.moveToStarted(0) : copy;
    }

    /** The routing table of {@code shard} holding {@code copies}. */
    public static IndexShardRoutingTable shard(ShardId shard, ShardRouting... copies) {
        IndexShardRoutingTable.Builder builder = IndexShardRoutingTable.builder(shard);
        for (ShardRouting copy : copies) {
            builder.addShard(copy);
        }
        return builder.build();
    }

    /** The lock index of one shard and one replica, of {@code uuid}, in primary term {@code term}, with {@code inSync}. */
    public static IndexMetadata lockIndex(String uuid, long term, String... inSync) {
        return IndexMetadata.builder(LockIndex.NAME)
                .settings(Settings.builder()
                        .put(IndexMetadata.SETTING_VERSION_CREATED, IndexVersion.current())
                        .put(IndexMetadata.SETTING_INDEX_UUID, uuid))
                .numberOfShards(1)
                .numberOfReplicas(1)
                .primaryTerm(0, term)
                .putInSyncAllocationIds(0, Set.of(inSync))
                .build();
    }
}
