package org.eslm.plugin;

import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.cluster.routing.allocation.decider.AllocationDecider;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.util.concurrent.EsExecutors;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.health.HealthIndicatorService;
import org.elasticsearch.index.IndexModule;
import org.elasticsearch.indices.SystemIndexDescriptor;
import org.elasticsearch.plugins.ClusterPlugin;
import org.elasticsearch.plugins.ExtensiblePlugin;
import org.elasticsearch.plugins.HealthPlugin;
import org.elasticsearch.plugins.ScriptPlugin;
import org.elasticsearch.plugins.SystemIndexPlugin;
import org.elasticsearch.rest.RestHandler;
import org.elasticsearch.script.ScriptContext;
import org.elasticsearch.script.ScriptEngine;
import org.elasticsearch.telemetry.metric.MeterRegistry;
import org.elasticsearch.threadpool.ExecutorBuilder;
import org.elasticsearch.threadpool.FixedExecutorBuilder;
import org.eslm.action.TransportAcquireLockAction;
import org.eslm.action.TransportDowngradeLockAction;
import org.eslm.action.TransportForceReleaseLockAction;
import org.eslm.action.TransportGetLockAction;
import org.eslm.action.TransportGroupAction;
import org.eslm.action.TransportListLocksAction;
import org.eslm.action.TransportLockDiagnosticsAction;
import org.eslm.action.TransportLockSessionAction;
import org.eslm.action.TransportLockStatsAction;
import org.eslm.action.TransportNodeDiagnosticsAction;
import org.eslm.action.TransportPreemptLockAction;
import org.eslm.action.TransportReleaseLockAction;
import org.eslm.action.TransportRenewLockAction;
import org.eslm.action.TransportSemaphoreLimitAction;
import org.eslm.action.TransportWatchLockAction;
import org.eslm.api.LockManagerExtension;
import org.eslm.api.PluginLocks;
import org.eslm.bridge.LockNative;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativePlatform;
import org.eslm.cluster.LockCopiesOffMaster;
import org.eslm.cluster.LockHistory;
import org.eslm.cluster.LockIndex;
import org.eslm.cluster.LongestLeaseRecorder;
import org.eslm.cluster.OwnershipCheckAction;
import org.eslm.cluster.PartitionCopies;
import org.eslm.cluster.PartitionHandoffAction;
import org.eslm.cluster.PartitionManager;
import org.eslm.cluster.PartitionOwnership;
import org.eslm.cluster.PartitionStateAction;
import org.eslm.cluster.PartitionTable;
import org.eslm.cluster.PeerFormats;
import org.eslm.cluster.SilentOwners;
import org.eslm.cluster.SilentPrimaryFailure;
import org.eslm.compat.VersionedActionPlugin;
import org.eslm.core.BridgeJson;
import org.eslm.health.LockPartitionsHealthIndicator;
import org.eslm.replication.CopyCatchUp;
import org.eslm.replication.LockReplicationAction;
import org.eslm.replication.LockShardListener;
import org.eslm.replication.ReplicationWiring;
import org.eslm.replication.ShardStateLog;
import org.eslm.replication.SilentCopyFailure;
import org.eslm.rest.RequestBodies;
import org.eslm.rest.RestAcquireLockAction;
import org.eslm.rest.RestCatLocksAction;
import org.eslm.rest.RestCatScopeAction;
import org.eslm.rest.RestElectionAction;
import org.eslm.rest.RestForceReleaseLockAction;
import org.eslm.rest.RestGetLockAction;
import org.eslm.rest.RestGroupAction;
import org.eslm.rest.RestHeldLockAction;
import org.eslm.rest.RestLockDiagnosticsAction;
import org.eslm.rest.RestLockSessionAction;
import org.eslm.rest.RestLockStatsAction;
import org.eslm.rest.RestNodeDiagnosticsAction;
import org.eslm.rest.RestReleaseLockAction;
import org.eslm.rest.RestSemaphoreAction;
import org.eslm.rest.RestWatchLockAction;
import org.eslm.script.FenceScriptEngine;
import org.eslm.service.LockMetrics;
import org.eslm.service.LockService;
import org.eslm.settings.LockSettings;

/**
 * The plugin's wiring and nothing else: registers settings, loads the native library, creates
 * the node's lock service, registers its metrics with Elasticsearch's telemetry, and registers
 * transport actions and REST handlers. Lock semantics live in Rust.
 */
public class LockManagerPlugin extends VersionedActionPlugin
        implements SystemIndexPlugin, ExtensiblePlugin, HealthPlugin, ClusterPlugin, ScriptPlugin {
    /** The plugin's name in {@code plugin-descriptor.properties}, and so its directory under {@code plugins/}. */
    public static final String NAME = "lock-manager";

    private static final Logger logger = LogManager.getLogger(LockManagerPlugin.class);

    private volatile LockService lockService;
    private volatile ClusterService clusterService;
    private volatile LockShardListener shardListener;
    private volatile LockPartitionsHealthIndicator healthIndicator;
    private volatile LockHistory history;
    private List<LockManagerExtension> extensions = List.of();

    /**
     * Initializes {@link ElasticsearchException} while the node is built, on one thread, before
     * any request runs. Its class initializer builds the registry of Elasticsearch's exception
     * classes; run first by the plugin's first refusal on a transport worker while a write thread
     * creates a version conflict, the two threads wait for each other's class initialization
     * forever (seen in CI on 9.5.3: the worker in {@code ElasticsearchExceptionHandle.<clinit>},
     * the write thread in {@code InternalEngine.planIndexingAsPrimaryWithVersion}, and every
     * request on that worker unanswered). Initialized here, it is done before either can start.
     */
    public LockManagerPlugin() {
        initialize(ElasticsearchException.class);
    }

    private static void initialize(Class<?> type) {
        try {
            Class.forName(type.getName(), true, type.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("cannot initialize " + type.getName(), e);
        }
    }

    /**
     * The pool that applies and persists replicated lock batches (see {@link LockReplicationAction}),
     * and the one-thread pool that lists held locks (see {@link TransportListLocksAction#EXECUTOR}).
     */
    @Override
    public List<ExecutorBuilder<?>> getExecutorBuilders(Settings settings) {
        return List.of(
                new FixedExecutorBuilder(
                        settings,
                        LockReplicationAction.EXECUTOR,
                        2,
                        -1,
                        "locks.replication.thread_pool",
                        EsExecutors.TaskTrackingConfig.DO_NOT_TRACK),
                new FixedExecutorBuilder(
                        settings,
                        TransportListLocksAction.EXECUTOR,
                        1,
                        -1,
                        "locks.listing.thread_pool",
                        EsExecutors.TaskTrackingConfig.DO_NOT_TRACK));
    }

    /**
     * Announces the state format this node reads, in the node attribute {@code locks.format}
     * (docs/ARCHITECTURE.md "Formats and versions"): its peers write what it can read.
     */
    @Override
    public Settings additionalSettings() {
        return PeerFormats.nodeSettings();
    }

    /** Follows the lock index's shards on this node (restore, recovery gate, close). */
    @Override
    public void onIndexModule(IndexModule indexModule) {
        LockShardListener listener = shardListener;
        if (listener != null && LockIndex.NAME.equals(indexModule.getIndex().getName())) {
            indexModule.addIndexEventListener(listener);
        }
    }

    /** Plugins that lock from inside the node (org.eslm.api.LockManagerExtension). */
    @Override
    public void loadExtensions(ExtensionLoader loader) {
        extensions = List.copyOf(loader.loadExtensions(LockManagerExtension.class));
    }

    @Override
    public List<Setting<?>> getSettings() {
        return LockSettings.ALL;
    }

    /**
     * The node's lock core with no partitions yet: PartitionManager opens those whose primary this
     * node holds, and each serves only while the core's ownership protocol says its lease is
     * current. The node's name goes with each holder the core shows (docs/API.md "Reading").
     */
    private static NativeLockCore newCore(LockSettings.Values values, String nodeName) {
        // "leases": a node of a cluster, where a partition serves only while its lease is current.
        Map<String, Object> nodeConfig =
                Map.of("config", values.coreConfig(), "partitions", List.of(), "node_name", nodeName, "leases", true);
        return NativeLockCore.create(BridgeJson.toJson(nodeConfig));
    }

    @Override
    public Collection<?> createComponents(PluginServices services) {
        Settings settings = services.environment().settings();
        LockSettings.DURABILITY.get(settings); // validates: refuses to start on an unsupported mode
        LockSettings.Values values = LockSettings.Values.of(settings);
        LockSettings.checkRecoveryGrace(settings, values.leaseMax());

        // native/<platform>/libeslm.so; on a platform the zip lacks, the node stops naming it.
        Path library =
                NativePlatform.library(services.environment().pluginsDir().resolve(NAME));
        LockNative.load(library);
        BuildInfo buildInfo = BuildInfo.current();
        logger.info("loaded native lock library [{}] from [{}]", buildInfo.nativeVersion(), buildInfo.nativeLibrary());

        ClusterService clusterService = services.clusterService();
        this.clusterService = clusterService;
        NativeLockCore core = newCore(values, clusterService.getNodeName());
        Supplier<TimeValue> grace = grace(settings, values, clusterService);
        Supplier<Map<String, Object>> nodeInfo = () -> nodeInfo(clusterService, buildInfo, settings, grace);
        PartitionOwnership ownership = new PartitionOwnership();
        boolean replicated = LockSettings.DURABILITY_REPLICATED.equals(LockSettings.DURABILITY.get(settings));
        ShardStateLog log = ShardStateLog.forNativeBuild(buildInfo.nativeVersion());
        LockService service = new LockService(
                core,
                services.threadPool(),
                () -> clusterService.localNode().getName(),
                nodeInfo,
                values,
                ownership,
                replicated,
                new ReplicationWiring(log));
        clusterService
                .getClusterSettings()
                .addSettingsUpdateConsumer(
                        updated -> service.applySettings(LockSettings.Values.of(updated)),
                        LockSettings.DYNAMIC,
                        // rejects e.g. a default above the max, or a max above this node's set grace
                        updated -> LockSettings.checkRecoveryGrace(
                                settings, LockSettings.Values.of(updated).leaseMax()));
        PartitionCopies copies = new PartitionCopies();
        PartitionManager partitions = new PartitionManager(
                service,
                ownership,
                clusterService,
                services.client(),
                services.threadPool(),
                LockSettings.PARTITIONS.get(settings),
                grace,
                services.indicesService(),
                copies);
        clusterService.addListener(partitions);
        clusterService.addListener(new LongestLeaseRecorder(service, services.client(), services.threadPool()));
        registerMetrics(services, service);
        lockService = service;
        healthIndicator = new LockPartitionsHealthIndicator(
                clusterService, services.client(), services.threadPool(), service.reports()::diagnostics, replicated);
        CopyCatchUp catchUp = new CopyCatchUp(service, log, clusterService, services.client(), services.threadPool());
        shardListener = new LockShardListener(service, log, clusterService, catchUp, services.threadPool());
        LockHistory lockHistory = new LockHistory(service, services.client(), services.threadPool());
        lockHistory.start();
        history = lockHistory;
        PluginLocks pluginLocks = new PluginLocks(services.client(), new RequestBodies(service::readRequest));
        extensions.forEach(extension -> extension.onLocksReady(pluginLocks));
        return List.of(
                service,
                buildInfo,
                partitions,
                log,
                copies,
                catchUp,
                pluginLocks,
                silentOwners(clusterService, settings, service),
                new SilentPrimaryFailure(clusterService, services.allocationService(), service.promotions()),
                new SilentCopyFailure.MasterTasks(clusterService, services.allocationService()));
    }

    /**
     * The recovery grace: it covers the longest lease any node may have granted, the highest lease
     * maximum in force here since start (it is dynamic) or recorded by any node
     * ({@link LongestLeaseRecorder}).
     */
    private Supplier<TimeValue> grace(Settings settings, LockSettings.Values values, ClusterService clusterService) {
        return () -> {
            LockService started = lockService;
            TimeValue here = started != null ? started.highestLeaseMax() : values.leaseMax();
            TimeValue recorded = LongestLeaseRecorder.recorded(clusterService.state());
            return LockSettings.recoveryGrace(settings, here.compareTo(recorded) >= 0 ? here : recorded);
        };
    }

    /**
     * The lock metrics, in the registry of Elasticsearch's telemetry (docs/OPERATIONS.md "Metrics"),
     * drained while its {@code telemetry.metrics.enabled} is on.
     */
    private static void registerMetrics(PluginServices services, LockService service) {
        MeterRegistry meters = services.telemetryProvider().getMeterRegistry();
        ClusterSettings clusterSettings = services.clusterService().getClusterSettings();
        service.metrics().register(meters, LockMetrics.metricsOn(clusterSettings, meters));
        service.metrics().startDraining(services.threadPool());
    }

    /** What diagnostics tell of this node: its id and name, the plugin's build, the static settings. */
    private static Map<String, Object> nodeInfo(
            ClusterService clusterService, BuildInfo buildInfo, Settings settings, Supplier<TimeValue> grace) {
        DiscoveryNode node = clusterService.localNode();
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("node", Map.of("id", node.getId(), "name", node.getName()));
        info.put("plugin", buildInfo.asMap());
        info.put(
                "static_settings",
                Map.of(
                        LockSettings.PARTITIONS.getKey(), LockSettings.PARTITIONS.get(settings),
                        LockSettings.DURABILITY.getKey(), LockSettings.DURABILITY.get(settings),
                        LockSettings.RECOVERY_GRACE.getKey(), grace.get().getStringRep()));
        return info;
    }

    /**
     * The master's watch for silent owners, its bound following the dynamic setting
     * {@code locks.failover.silent_owner}, deciding through the core's ownership protocol
     * (docs/ARCHITECTURE.md "Silent owners").
     */
    private static SilentOwners silentOwners(ClusterService clusterService, Settings settings, LockService service) {
        AtomicReference<TimeValue> bound = new AtomicReference<>(LockSettings.SILENT_OWNER_FAILOVER.get(settings));
        clusterService.getClusterSettings().addSettingsUpdateConsumer(LockSettings.SILENT_OWNER_FAILOVER, bound::set);
        return new SilentOwners(
                bound::get,
                LockSettings.DURABILITY_REPLICATED.equals(LockSettings.DURABILITY.get(settings)),
                service.ownership());
    }

    /**
     * The {@code eslm} script language's fenced update (docs/API.md "Fenced changes"). Elasticsearch
     * asks for script engines before it creates the plugin's components, so the engine reaches the
     * node's core through the lock service once that exists.
     */
    @Override
    public ScriptEngine getScriptEngine(Settings settings, Collection<ScriptContext<?>> contexts) {
        return new FenceScriptEngine(args -> {
            LockService service = lockService;
            if (service == null) {
                throw new IllegalStateException("the lock manager is not started on this node yet");
            }
            return service.fence(args);
        });
    }

    @Override
    public Collection<AllocationDecider> createAllocationDeciders(Settings settings, ClusterSettings clusterSettings) {
        return List.of(new LockCopiesOffMaster(settings, clusterSettings));
    }

    @Override
    public List<Action> actions() {
        return List.of(
                new Action(TransportAcquireLockAction.TYPE, TransportAcquireLockAction.class),
                new Action(TransportReleaseLockAction.TYPE, TransportReleaseLockAction.class),
                new Action(TransportRenewLockAction.TYPE, TransportRenewLockAction.class),
                new Action(TransportDowngradeLockAction.TYPE, TransportDowngradeLockAction.class),
                new Action(TransportForceReleaseLockAction.TYPE, TransportForceReleaseLockAction.class),
                new Action(TransportSemaphoreLimitAction.TYPE, TransportSemaphoreLimitAction.class),
                new Action(TransportGroupAction.TYPE, TransportGroupAction.class),
                new Action(TransportPreemptLockAction.TYPE, TransportPreemptLockAction.class),
                new Action(TransportLockSessionAction.TYPE, TransportLockSessionAction.class),
                new Action(TransportGetLockAction.TYPE, TransportGetLockAction.class),
                new Action(TransportWatchLockAction.TYPE, TransportWatchLockAction.class),
                new Action(TransportLockStatsAction.TYPE, TransportLockStatsAction.class),
                new Action(TransportLockDiagnosticsAction.TYPE, TransportLockDiagnosticsAction.class),
                new Action(TransportListLocksAction.TYPE, TransportListLocksAction.class),
                new Action(PartitionHandoffAction.TYPE, PartitionHandoffAction.Transport.class),
                new Action(PartitionHandoffAction.IN_EPOCH, PartitionHandoffAction.InEpoch.class),
                new Action(OwnershipCheckAction.TYPE, OwnershipCheckAction.Transport.class),
                new Action(SilentCopyFailure.TYPE, SilentCopyFailure.Transport.class),
                new Action(PartitionStateAction.TYPE, PartitionStateAction.Transport.class),
                new Action(LockReplicationAction.TYPE, LockReplicationAction.class),
                new Action(TransportNodeDiagnosticsAction.TYPE, TransportNodeDiagnosticsAction.class));
    }

    @Override
    public Collection<RestHandler> restHandlers(Settings nodeSettings) {
        Supplier<LockSettings.Values> settings = () -> {
            LockService service = lockService;
            return service != null ? service.settings() : LockSettings.Values.of(nodeSettings);
        };
        RequestBodies bodies = new RequestBodies(args -> lockService.readRequest(args));
        return List.of(
                new RestAcquireLockAction(settings, bodies),
                new RestReleaseLockAction(settings, bodies),
                RestHeldLockAction.renew(settings, bodies),
                RestHeldLockAction.downgrade(settings, bodies),
                new RestForceReleaseLockAction(bodies),
                new RestLockSessionAction(settings, bodies),
                new RestSemaphoreAction(settings, bodies),
                new RestElectionAction(settings, bodies, args -> lockService.electionView(args)),
                new RestGroupAction(settings, bodies, () -> {
                    ClusterService cluster = clusterService;
                    return cluster == null ? null : PartitionTable.of(cluster.state());
                }),
                new RestGetLockAction(),
                new RestWatchLockAction(bodies),
                new RestCatLocksAction(),
                RestCatScopeAction.semaphores(),
                RestCatScopeAction.elections(),
                new RestLockStatsAction(),
                new RestLockDiagnosticsAction(),
                new RestNodeDiagnosticsAction());
    }

    /** The {@code lock_partitions} indicator of {@code GET _health_report} (docs/API.md "Health"). */
    @Override
    public Collection<HealthIndicatorService> getHealthIndicatorServices() {
        return List.of(healthIndicator);
    }

    @Override
    public Collection<SystemIndexDescriptor> getSystemIndexDescriptors(Settings settings) {
        return List.of(LockIndex.descriptor());
    }

    @Override
    public String getFeatureName() {
        return "lock_manager";
    }

    @Override
    public String getFeatureDescription() {
        return "Cluster-wide locks: the lock index's shards are the lock partitions";
    }

    @Override
    public void close() {
        LockHistory started = history;
        if (started != null) {
            started.close();
        }
        LockService service = lockService;
        if (service != null) {
            service.close();
        }
    }
}
