package org.eslm.cluster;

import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.transport.TransportService;

/**
 * What every transport action of the plugin is built from: the transport service, the action
 * filters and the cluster service. Injected as one (Elasticsearch's injector builds it on demand
 * from its {@code @Inject} constructor), so each action's constructor names one parameter for
 * them and only adds what is its own (the lock service, the partition manager).
 *
 * <p>It lives in {@code org.eslm.cluster}, the lowest package with transport actions, so that
 * {@code org.eslm.action} may use it too (docs/ARCHITECTURE.md: the packages are layered).
 */
public final class TransportWiring {
    private final TransportService transportService;
    private final ActionFilters actionFilters;
    private final ClusterService clusterService;

    @Inject
    public TransportWiring(
            TransportService transportService, ActionFilters actionFilters, ClusterService clusterService) {
        this.transportService = transportService;
        this.actionFilters = actionFilters;
        this.clusterService = clusterService;
    }

    public TransportService transportService() {
        return transportService;
    }

    public ActionFilters actionFilters() {
        return actionFilters;
    }

    public ClusterService clusterService() {
        return clusterService;
    }
}
