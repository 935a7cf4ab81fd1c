package org.eslm.example;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.RestHandler;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.api.PluginLocks;

/**
 * An example of a plugin that locks from inside Elasticsearch (README "Locking from another
 * plugin"): {@code POST /_example/guarded_job/{key}} runs a (pretend) job while it holds the
 * cluster-wide lock {@code key}, taken through {@link PluginLocks}. Its descriptor says
 * {@code extended.plugins=lock-manager}; {@link LocksReady} receives the locks.
 */
public class GuardedJobPlugin extends Plugin implements ActionPlugin {
    private volatile PluginLocks locks;
    private volatile ThreadPool threadPool;

    /** Called by {@link LocksReady} while the node starts, before the REST handlers are built. */
    void locksReady(PluginLocks ready) {
        this.locks = ready;
    }

    @Override
    public Collection<?> createComponents(PluginServices services) {
        threadPool = services.threadPool();
        return List.of();
    }

    @Override
    public Collection<RestHandler> getRestHandlers(
            RestHandlersServices services,
            Supplier<DiscoveryNodes> nodesInCluster,
            Predicate<NodeFeature> clusterSupportsFeature) {
        if (locks == null) {
            throw new IllegalStateException("the lock manager did not hand over its locks: is it installed?");
        }
        return List.of(new RestGuardedJobAction(locks, threadPool));
    }
}
