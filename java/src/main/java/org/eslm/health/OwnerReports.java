package org.eslm.health;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.util.concurrent.EsRejectedExecutionException;
import org.elasticsearch.common.util.concurrent.ThreadContext;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.action.LockDiagnosticsRequest;
import org.eslm.action.LockDiagnosticsResponse;
import org.eslm.action.NodeLockDiagnosticsResponse;
import org.eslm.action.TransportLockDiagnosticsAction;
import org.eslm.bridge.BridgeField;
import org.eslm.cluster.PartitionTable;

/**
 * What the owners of the lock partitions say about them, for the health indicator: which
 * partitions each owner serves, whether the elected master confirmed it, and how much recovery
 * grace is left (docs/API.md "Health"). Only the owner knows these, and an indicator must answer
 * without waiting: this node reads its own partitions from its lock service when asked, and the
 * other owners' node diagnostics ({@link TransportLockDiagnosticsAction}) are asked every
 * {@link #INTERVAL} in the background, from the moment the indicator is first asked
 * on this node until {@link #KEEP_ASKING} after it was last asked; the indicator uses a report no
 * older than {@link #FRESH}.
 */
final class OwnerReports {
    private static final Logger logger = LogManager.getLogger(OwnerReports.class);

    /** How often the owners are asked while the indicator is in use. */
    static final TimeValue INTERVAL = TimeValue.timeValueSeconds(1);
    /** The oldest report the indicator uses; an owner without one is shown as not reporting. */
    static final TimeValue FRESH = TimeValue.timeValueSeconds(5);
    /** How long after the indicator was last asked the owners are still asked. */
    static final TimeValue KEEP_ASKING = TimeValue.timeValueMinutes(10);

    /** One partition as its owner reported it. */
    record Served(long epoch, boolean confirmed, long graceLeftMs) {}

    /** One owner's report: when it arrived ({@link System#nanoTime()}) and the partitions it serves. */
    record Report(long atNanos, Map<Integer, Served> partitions) {}

    private final Client client;
    private final ThreadPool threadPool;
    private final ClusterService clusterService;
    private final Supplier<Map<String, Object>> localDiagnostics;
    private final Map<String, Report> reports = new ConcurrentHashMap<>();
    private final AtomicBoolean asking = new AtomicBoolean();
    private volatile long wantedAtNanos;

    OwnerReports(
            Client client,
            ThreadPool threadPool,
            ClusterService clusterService,
            Supplier<Map<String, Object>> localDiagnostics) {
        this.localDiagnostics = localDiagnostics;
        this.client = client;
        this.threadPool = threadPool;
        this.clusterService = clusterService;
    }

    /**
     * The fresh reports by node id: this node's read now from its own lock service, the others'
     * as last received if no older than {@link #FRESH}.
     */
    Map<String, Report> current() {
        long now = System.nanoTime();
        Map<String, Report> current = new HashMap<>();
        reports.forEach((node, report) -> {
            if (now - report.atNanos() <= FRESH.nanos()) {
                current.put(node, report);
            }
        });
        current.put(clusterService.localNode().getId(), new Report(now, served(localDiagnostics.get())));
        return current;
    }

    /** The indicator is being asked: ask the owners now (unless already asking) and keep asking. */
    void wanted() {
        wantedAtNanos = System.nanoTime();
        if (asking.compareAndSet(false, true)) {
            threadPool.generic().execute(this::ask);
        }
    }

    @SuppressWarnings("try") // the stored context restores the caller's thread context on close
    private void ask() {
        PartitionTable table = PartitionTable.of(clusterService.state());
        Set<String> owners = new HashSet<>();
        String local = clusterService.localNode().getId();
        for (int p = 0; table != null && p < table.size(); p++) {
            if (table.owner(p) != null && table.owner(p).equals(local) == false) {
                owners.add(table.owner(p));
            }
        }
        if (owners.isEmpty()) {
            next();
            return;
        }
        ThreadContext context = threadPool.getThreadContext();
        try (ThreadContext.StoredContext ignored = context.stashContext()) {
            context.markAsSystemContext(); // the plugin's own question, not the caller's
            client.execute(
                    TransportLockDiagnosticsAction.TYPE,
                    new LockDiagnosticsRequest(owners.toArray(String[]::new)),
                    ActionListener.wrap(
                            response -> {
                                record(response);
                                next();
                            },
                            e -> {
                                logger.debug("asking the lock partition owners for their state failed", e);
                                next();
                            }));
        }
    }

    private void next() {
        if (System.nanoTime() - wantedAtNanos < KEEP_ASKING.nanos()) {
            try {
                threadPool.schedule(this::ask, INTERVAL, threadPool.generic());
            } catch (EsRejectedExecutionException e) {
                asking.set(false); // the node is shutting down
            }
            return;
        }
        asking.set(false);
        if (System.nanoTime() - wantedAtNanos < KEEP_ASKING.nanos() && asking.compareAndSet(false, true)) {
            threadPool.generic().execute(this::ask); // wanted again meanwhile
        }
    }

    private void record(LockDiagnosticsResponse response) {
        long now = System.nanoTime();
        for (NodeLockDiagnosticsResponse node : response.getNodes()) {
            reports.put(node.getNode().getId(), new Report(now, served(node.diagnostics())));
        }
    }

    /** The partitions a node's diagnostics ({@code core.partitions}) show it serves. */
    static Map<Integer, Served> served(Map<String, Object> diagnostics) {
        Map<Integer, Served> served = new LinkedHashMap<>();
        if (diagnostics.get("core") instanceof Map<?, ?> core
                && BridgeField.PARTITIONS.in(core) instanceof List<?> list) {
            for (Object entry : list) {
                Map<?, ?> p = (Map<?, ?>) entry;
                served.put(
                        ((Number) BridgeField.ID.in(p)).intValue(),
                        new Served(
                                ((Number) BridgeField.EPOCH.in(p)).longValue(),
                                Boolean.TRUE.equals(p.get("confirmed")),
                                BridgeField.GRACE_LEFT_MS.in(p) instanceof Number left ? left.longValue() : 0L));
            }
        }
        return served;
    }
}
