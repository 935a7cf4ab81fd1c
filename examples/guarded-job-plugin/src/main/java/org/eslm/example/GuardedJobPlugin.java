package org.eslm.example;

import java.util.Collection;
import java.util.List;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.rest.RestHandler;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.api.PluginLocks;
import org.eslm.compat.VersionedActionPlugin;

/**
 * An example of a plugin that locks from inside Elasticsearch (README "Locking from another
 * plugin"): {@code POST /_example/guarded_job/{key}} runs a (pretend) job while it holds the
 * cluster-wide lock {@code key}, taken through {@link PluginLocks}. Its descriptor says
 * {@code extended.plugins=lock-manager}; {@link LocksReady} receives the locks. It extends the lock
 * manager's {@link VersionedActionPlugin}, so the same source builds for Elasticsearch 8.19 and 9.x.
 */
public class GuardedJobPlugin extends VersionedActionPlugin {
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
    public Collection<RestHandler> restHandlers(Settings settings) {
        if (locks == null) {
            throw new IllegalStateException("the lock manager did not hand over its locks: is it installed?");
        }
        return List.of(new RestGuardedJobAction(locks, threadPool));
    }
}
