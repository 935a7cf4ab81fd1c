package org.eslm.compat;

import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.metadata.DataStream;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.metadata.ProjectId;
import org.elasticsearch.cluster.routing.IndexRoutingTable;

/**
 * An index's metadata and routing, and a data stream, in a cluster state (Elasticsearch 9). Elasticsearch 9 is
 * multi-project: indices live in a project ({@code Metadata.getProject(ProjectId)},
 * {@code ClusterState.routingTable(ProjectId)}); the plugin lives in the default one. The 8.19
 * flavour reads the cluster's single index namespace instead (docs/OPERATIONS.md "Versions").
 */
public final class ProjectScope {
    private ProjectScope() {}

    /** The metadata of index {@code name}, or {@code null} while it does not exist. */
    public static IndexMetadata index(ClusterState state, String name) {
        return state.metadata().getProject(ProjectId.DEFAULT).index(name);
    }

    /** The routing table of index {@code name}, or {@code null} while it does not exist. */
    public static IndexRoutingTable routing(ClusterState state, String name) {
        return state.routingTable(ProjectId.DEFAULT).index(name);
    }

    /** The data stream {@code name}, or {@code null} while it does not exist. */
    public static DataStream dataStream(ClusterState state, String name) {
        return state.metadata().getProject(ProjectId.DEFAULT).dataStreams().get(name);
    }
}
