package org.eslm.compat;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.cluster.metadata.IndexNameExpressionResolver;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.common.io.stream.NamedWriteableRegistry;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.IndexScopedSettings;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.settings.SettingsFilter;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.RestController;
import org.elasticsearch.rest.RestHandler;

/**
 * An {@link ActionPlugin} whose actions and REST handlers are declared once for both majors
 * (Elasticsearch 8.19 flavour). 8.19's {@code ActionPlugin.ActionHandler<Request, Response>} is
 * typed by the action's request and response and {@code getRestHandlers} takes nine parameters;
 * 9.x's handler is untyped and {@code getRestHandlers} takes a {@code RestHandlersServices}
 * record. Subclasses declare {@link PortableActions}.
 */
public abstract class VersionedActionPlugin extends Plugin implements ActionPlugin, PortableActions {
    @Override
    public final List<ActionHandler<? extends ActionRequest, ? extends ActionResponse>> getActions() {
        return actions().stream().map(VersionedActionPlugin::handler).toList();
    }

    /** The type and the class agree by construction (each action's {@code TYPE} and its class). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ActionHandler<? extends ActionRequest, ? extends ActionResponse> handler(Action action) {
        return new ActionHandler(action.type(), (Class) action.transport());
    }

    @Override
    public final Collection<RestHandler> getRestHandlers(
            Settings settings,
            NamedWriteableRegistry namedWriteableRegistry,
            RestController restController,
            ClusterSettings clusterSettings,
            IndexScopedSettings indexScopedSettings,
            SettingsFilter settingsFilter,
            IndexNameExpressionResolver indexNameExpressionResolver,
            Supplier<DiscoveryNodes> nodesInCluster,
            Predicate<NodeFeature> clusterSupportsFeature) {
        return restHandlers(settings);
    }
}
