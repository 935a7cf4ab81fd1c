package org.eslm.compat;

import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.metadata.DataStream;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexRoutingTable;

/**
 * An index's metadata and routing, and a data stream, in a cluster state (Elasticsearch 8.19). Elasticsearch 8 has
 * one index namespace per cluster ({@code Metadata.index(String)},
 * {@code ClusterState.routingTable()}); 9.x moved indices into projects ({@code ProjectId}), which
 * the 9.x flavour of this class reads (docs/OPERATIONS.md "Versions").
 */
public final class ProjectScope {
    private ProjectScope() {}

    /** The metadata of index {@code name}, or {@code null} while it does not exist. */
    public static IndexMetadata index(ClusterState state, String name) {
        return state.metadata().index(name);
    }

    /** The routing table of index {@code name}, or {@code null} while it does not exist. */
    public static IndexRoutingTable routing(ClusterState state, String name) {
        return state.routingTable().index(name);
    }

    /** The data stream {@code name}, or {@code null} while it does not exist. */
    public static DataStream dataStream(ClusterState state, String name) {
        return state.metadata().dataStreams().get(name);
    }
}
