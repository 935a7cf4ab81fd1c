package org.eslm.cluster;

import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.UnassignedInfo;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.indices.SystemIndexDescriptor;

/**
 * The system index whose shards are the lock partitions. It holds no documents: it exists so
 * that Elasticsearch's own allocation places the partitions (primary = owner), detects failed
 * nodes, promotes replicas, and counts primary terms (the fencing epochs).
 */
public final class LockIndex {
    public static final String NAME = ".locks";

    private LockIndex() {}

    /** The descriptor registered by the plugin: an internal, plugin-managed system index. */
    public static SystemIndexDescriptor descriptor() {
        return SystemIndexDescriptor.builder()
                .setIndexPattern(NAME + "*")
                .setDescription("Lock partitions of the lock-manager plugin (no documents; shards place lock owners)")
                .setType(SystemIndexDescriptor.Type.INTERNAL_UNMANAGED)
                .build();
    }

    /**
     * One shard per partition and one replica where a second node exists. A copy lost with its
     * node is replaced at once ({@code index.unassigned.node_left.delayed_timeout: 0}): the delay
     * Elasticsearch applies by default (a minute) spares copying a large shard to another node
     * when the node may come back, but a lock partition's copy holds no documents and is rebuilt
     * from its primary's state in a second, and until it is the partition has no promotable copy
     * (docs/RELIABILITY.md "Availability").
     */
    public static Settings settings(int partitions) {
        return Settings.builder()
                .put(IndexMetadata.SETTING_NUMBER_OF_SHARDS, partitions)
                .put(IndexMetadata.SETTING_AUTO_EXPAND_REPLICAS, "0-1")
                .put(IndexMetadata.SETTING_INDEX_HIDDEN, true)
                .put(UnassignedInfo.INDEX_DELAYED_NODE_LEFT_TIMEOUT_SETTING.getKey(), "0")
                .build();
    }
}
