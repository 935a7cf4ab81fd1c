package org.eslm.health;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.health.Diagnosis;
import org.elasticsearch.health.HealthIndicatorDetails;
import org.elasticsearch.health.HealthIndicatorResult;
import org.elasticsearch.health.HealthIndicatorService;
import org.elasticsearch.health.HealthStatus;
import org.elasticsearch.health.SimpleHealthIndicatorDetails;
import org.elasticsearch.health.node.HealthInfo;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.cluster.LockIndex;

/**
 * The {@code lock_partitions} indicator of {@code GET _health_report} (docs/API.md "Health"):
 * red when a partition has no owner serving it (lock requests for its keys answer 503), yellow
 * when one does not grant for now (its owner is not confirmed by the elected master, or it is in
 * recovery grace) or has no started replica ({@code locks.durability: replicated}), unknown when
 * an owner has not reported lately. Elasticsearch runs it on the node that received the request,
 * from that node's cluster state and the owners' latest reports ({@link OwnerReports}).
 */
public final class LockPartitionsHealthIndicator implements HealthIndicatorService {
    /** The indicator's name in {@code GET _health_report} (and {@code GET _health_report/lock_partitions}). */
    public static final String NAME = "lock_partitions";

    private final ClusterService clusterService;
    private final OwnerReports reports;
    private final boolean replicated;

    /**
     * @param localDiagnostics this node's diagnostics ({@code NodeReports.diagnostics}), read when
     *     the indicator is asked: the partitions this node owns are always reported fresh
     */
    public LockPartitionsHealthIndicator(
            ClusterService clusterService,
            Client client,
            ThreadPool threadPool,
            Supplier<Map<String, Object>> localDiagnostics,
            boolean replicated) {
        this.clusterService = clusterService;
        this.reports = new OwnerReports(client, threadPool, clusterService, localDiagnostics);
        this.replicated = replicated;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public HealthIndicatorResult calculate(boolean verbose, int maxAffectedResourcesCount, HealthInfo healthInfo) {
        reports.wanted();
        ClusterState state = clusterService.state();
        return evaluate(
                PartitionView.of(state, reports.current()), replicated, verbose, maxAffectedResourcesCount, state);
    }

    /** The partitions of each finding, by partition id. */
    static final class Findings {
        final Set<Integer> unavailable = new TreeSet<>();
        final Set<Integer> notOpen = new TreeSet<>();
        final Set<Integer> unconfirmed = new TreeSet<>();
        final Set<Integer> inGrace = new TreeSet<>();
        final Set<Integer> withoutReplica = new TreeSet<>();
        final Set<Integer> notReporting = new TreeSet<>();
        /** The owner nodes of the partitions not open, unconfirmed and not reporting, for the diagnoses. */
        final Map<Set<Integer>, Set<String>> owners = new LinkedHashMap<>();

        final Map<String, Long> graceLeftMs = new LinkedHashMap<>();

        static Findings of(PartitionView[] views, boolean replicated) {
            Findings f = new Findings();
            for (PartitionView v : views) {
                if (v.owner() == null) {
                    f.unavailable.add(v.id());
                    continue;
                }
                if (v.reported() == false) {
                    f.note(f.notReporting, v);
                } else if (v.served() == null) {
                    f.note(f.notOpen, v);
                } else {
                    if (v.served().confirmed() == false) {
                        f.note(f.unconfirmed, v);
                    }
                    if (v.served().graceLeftMs() > 0) {
                        f.inGrace.add(v.id());
                        f.graceLeftMs.put(String.valueOf(v.id()), v.served().graceLeftMs());
                    }
                }
                if (replicated && v.replicasStarted() < v.replicasWanted()) {
                    f.withoutReplica.add(v.id());
                }
            }
            return f;
        }

        private void note(Set<Integer> finding, PartitionView v) {
            finding.add(v.id());
            owners.computeIfAbsent(finding, k -> new TreeSet<>()).add(v.owner());
        }

        /** The owner nodes of the partitions of {@code finding}, as {@code state} knows them. */
        List<DiscoveryNode> owners(Set<Integer> finding, ClusterState state) {
            List<DiscoveryNode> nodes = new ArrayList<>();
            for (String id : owners.getOrDefault(finding, Set.of())) {
                DiscoveryNode node = state == null ? null : state.nodes().get(id);
                if (node != null) {
                    nodes.add(node);
                }
            }
            return nodes;
        }

        HealthStatus status() {
            if (unavailable.isEmpty() == false || notOpen.isEmpty() == false) {
                return HealthStatus.RED;
            }
            if (unconfirmed.isEmpty() == false || inGrace.isEmpty() == false || withoutReplica.isEmpty() == false) {
                return HealthStatus.YELLOW;
            }
            return notReporting.isEmpty() ? HealthStatus.GREEN : HealthStatus.UNKNOWN;
        }
    }

    /**
     * The indicator's result for the partitions {@code views} ({@code null}: the lock index does
     * not exist); {@code state} names the owner nodes in the diagnoses.
     */
    static HealthIndicatorResult evaluate(
            PartitionView[] views, boolean replicated, boolean verbose, int maxAffected, ClusterState state) {
        if (views == null) {
            return new HealthIndicatorResult(
                    NAME,
                    HealthStatus.RED,
                    "The lock index [" + LockIndex.NAME + "] does not exist yet.",
                    verbose ? new SimpleHealthIndicatorDetails(Map.of("partitions", 0)) : HealthIndicatorDetails.EMPTY,
                    List.of(HealthFindings.REFUSED),
                    verbose ? List.of(new Diagnosis(HealthFindings.INDEX_MISSING, List.of())) : List.of());
        }
        Findings f = Findings.of(views, replicated);
        HealthStatus status = f.status();
        return new HealthIndicatorResult(
                NAME,
                status,
                HealthFindings.symptom(f, views.length),
                verbose ? details(f, views.length, replicated, maxAffected) : HealthIndicatorDetails.EMPTY,
                HealthFindings.impacts(f),
                verbose ? HealthFindings.diagnoses(f, maxAffected, state) : List.of());
    }

    private static HealthIndicatorDetails details(Findings f, int partitions, boolean replicated, int maxAffected) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("partitions", partitions);
        details.put("durability", replicated ? "replicated" : "memory");
        put(details, "unavailable", f.unavailable, maxAffected);
        put(details, "not_open", f.notOpen, maxAffected);
        put(details, "unconfirmed", f.unconfirmed, maxAffected);
        put(details, "in_grace", f.inGrace, maxAffected);
        put(details, "without_replica", f.withoutReplica, maxAffected);
        put(details, "not_reporting", f.notReporting, maxAffected);
        if (f.graceLeftMs.isEmpty() == false) {
            details.put("grace_left_ms", f.graceLeftMs);
        }
        return new SimpleHealthIndicatorDetails(details);
    }

    /** {@code name}: how many, {@code name_partitions}: which (at most {@code maxAffected}). */
    private static void put(Map<String, Object> details, String name, Set<Integer> ids, int maxAffected) {
        details.put(name, ids.size());
        details.put(name + "_partitions", ids.stream().limit(maxAffected).toList());
    }
}
