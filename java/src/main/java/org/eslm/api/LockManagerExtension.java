package org.eslm.api;

/**
 * The extension point for plugins that lock from inside Elasticsearch (README "Locking from
 * another plugin"). A plugin whose descriptor says {@code extended.plugins=lock-manager} lists
 * its implementation in {@code META-INF/services/org.eslm.api.LockManagerExtension}; Elasticsearch
 * creates it when it loads that plugin (with a public constructor taking nothing, or taking the
 * extending plugin's instance), and the lock manager hands it {@link PluginLocks} once its own
 * components exist, before any plugin's REST handlers or transport actions are built.
 */
public interface LockManagerExtension {

    /** Called once per node, on the node's start-up thread. Keep the reference; do not lock here. */
    void onLocksReady(PluginLocks locks);
}
