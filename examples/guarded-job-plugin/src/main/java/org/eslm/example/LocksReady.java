package org.eslm.example;

import org.eslm.api.LockManagerExtension;
import org.eslm.api.PluginLocks;

/**
 * The lock manager's extension point, listed in
 * {@code META-INF/services/org.eslm.api.LockManagerExtension}. Elasticsearch builds it with the
 * extending plugin's instance, so the locks can be handed to that plugin.
 */
public class LocksReady implements LockManagerExtension {
    private final GuardedJobPlugin plugin;

    public LocksReady(GuardedJobPlugin plugin) {
        this.plugin = plugin;
    }

    @Override
    public void onLocksReady(PluginLocks locks) {
        plugin.locksReady(locks);
    }
}
