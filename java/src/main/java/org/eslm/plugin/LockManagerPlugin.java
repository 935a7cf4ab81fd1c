package org.eslm.plugin;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.RestHandler;
import org.eslm.action.TransportAcquireLockAction;
import org.eslm.action.TransportGetLockAction;
import org.eslm.action.TransportNodeDiagnosticsAction;
import org.eslm.action.TransportReleaseLockAction;
import org.eslm.bridge.LockNative;
import org.eslm.bridge.NativeLockCore;
import org.eslm.rest.RestAcquireLockAction;
import org.eslm.rest.RestGetLockAction;
import org.eslm.rest.RestNodeDiagnosticsAction;
import org.eslm.rest.RestReleaseLockAction;
import org.eslm.service.LockService;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The plugin's wiring and nothing else: loads the native library, creates the node's lock
 * service, and registers transport actions and REST handlers. Lock semantics live in Rust.
 */
public class LockManagerPlugin extends Plugin implements ActionPlugin {
    /** The plugin's name in {@code plugin-descriptor.properties}, and so its directory under {@code plugins/}. */
    public static final String NAME = "lock-manager";
    /** Where the zip puts the native library, relative to the plugin directory. */
    public static final String NATIVE_LIBRARY = "native/linux-x86_64/libeslm.so";
    /** Fencing epoch of the single-node core. Cluster routing replaces it with the shard's primary term. */
    static final long SINGLE_NODE_EPOCH = 1;

    private static final Logger logger = LogManager.getLogger(LockManagerPlugin.class);

    private volatile LockService lockService;

    @Override
    public Collection<?> createComponents(PluginServices services) {
        Path library = services.environment().pluginsDir().resolve(NAME).resolve(NATIVE_LIBRARY);
        LockNative.load(library);
        BuildInfo buildInfo = BuildInfo.current();
        logger.info("loaded native lock library [{}] from [{}]", buildInfo.nativeVersion(), buildInfo.nativeLibrary());
        lockService = new LockService(NativeLockCore.create(SINGLE_NODE_EPOCH));
        return List.of(lockService, buildInfo);
    }

    @Override
    public List<ActionHandler> getActions() {
        return List.of(
            new ActionHandler(TransportAcquireLockAction.TYPE, TransportAcquireLockAction.class),
            new ActionHandler(TransportReleaseLockAction.TYPE, TransportReleaseLockAction.class),
            new ActionHandler(TransportGetLockAction.TYPE, TransportGetLockAction.class),
            new ActionHandler(TransportNodeDiagnosticsAction.TYPE, TransportNodeDiagnosticsAction.class)
        );
    }

    @Override
    public Collection<RestHandler> getRestHandlers(
        RestHandlersServices services,
        Supplier<DiscoveryNodes> nodesInCluster,
        Predicate<NodeFeature> clusterSupportsFeature
    ) {
        return List.of(new RestAcquireLockAction(), new RestReleaseLockAction(), new RestGetLockAction(), new RestNodeDiagnosticsAction());
    }

    @Override
    public void close() {
        LockService service = lockService;
        if (service != null) {
            service.close();
        }
    }
}
