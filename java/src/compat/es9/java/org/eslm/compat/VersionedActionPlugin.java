package org.eslm.compat;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.RestHandler;

/**
 * An {@link ActionPlugin} whose actions and REST handlers are declared once for both majors
 * (Elasticsearch 9 flavour). 9.x's {@code ActionPlugin.ActionHandler} is not generic and
 * {@code getRestHandlers} takes a {@code RestHandlersServices} record; 8.19's handler is typed by
 * request and response and {@code getRestHandlers} takes nine parameters. Subclasses declare
 * {@link PortableActions}, which mean the same on both.
 */
public abstract class VersionedActionPlugin extends Plugin implements ActionPlugin, PortableActions {
    @Override
    public final List<ActionHandler> getActions() {
        return actions().stream()
                .map(action -> new ActionHandler(action.type(), action.transport()))
                .toList();
    }

    @Override
    public final Collection<RestHandler> getRestHandlers(
            RestHandlersServices services,
            Supplier<DiscoveryNodes> nodesInCluster,
            Predicate<NodeFeature> clusterSupportsFeature) {
        return restHandlers(services.settings());
    }
}
