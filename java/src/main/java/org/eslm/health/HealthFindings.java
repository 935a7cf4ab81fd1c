package org.eslm.health;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.health.Diagnosis;
import org.elasticsearch.health.HealthIndicatorImpact;
import org.elasticsearch.health.ImpactArea;
import org.eslm.cluster.LockIndex;

/**
 * The words of the {@code lock_partitions} indicator: its symptom, impacts and diagnoses, each
 * diagnosis with a cause, an action and where the documentation explains it (docs/API.md
 * "Health").
 */
final class HealthFindings {
    private HealthFindings() {}

    /** Where the indicator is documented: docs/API.md of the plugin's repository, section "Health". */
    static final String HELP_URL = "docs/API.md#health";

    private static final String NAME = LockPartitionsHealthIndicator.NAME;

    static final HealthIndicatorImpact REFUSED = new HealthIndicatorImpact(
            NAME,
            "lock_requests_refused",
            1,
            "Lock requests for keys of the affected partitions answer 503 (retryable) until an owner serves them:"
                    + " work that takes these locks waits or fails.",
            List.of(ImpactArea.INGEST, ImpactArea.DEPLOYMENT_MANAGEMENT));
    static final HealthIndicatorImpact PAUSED = new HealthIndicatorImpact(
            NAME,
            "lock_grants_paused",
            2,
            "The affected partitions grant no lock for now: requests for their keys answer 503 (retryable) or wait.",
            List.of(ImpactArea.INGEST, ImpactArea.DEPLOYMENT_MANAGEMENT));
    static final HealthIndicatorImpact AT_RISK = new HealthIndicatorImpact(
            NAME,
            "lock_partitions_at_risk",
            3,
            "The affected partitions have no copy to fail over to: if their owner fails they are unavailable until"
                    + " it returns.",
            List.of(ImpactArea.DEPLOYMENT_MANAGEMENT));

    static final Diagnosis.Definition INDEX_MISSING = new Diagnosis.Definition(
            NAME,
            "lock_index_missing",
            "The lock index [" + LockIndex.NAME + "], whose shards are the lock partitions, does not exist.",
            "The elected master creates it as soon as it sees it missing. If it stays missing, check the elected"
                    + " master's log for why it could not be created.",
            HELP_URL);
    static final Diagnosis.Definition UNASSIGNED = new Diagnosis.Definition(
            NAME,
            "partition_unassigned",
            "The partition's shard of [" + LockIndex.NAME + "] has no active primary: the node that held it left"
                    + " and no in-sync copy could be promoted, or its copy cannot be used.",
            "Start the node that held the partition again (its copy holds the partition's locks), or see why"
                    + " Elasticsearch does not assign it: GET _cluster/allocation/explain with index ["
                    + LockIndex.NAME + "], the partition as shard and primary true.",
            HELP_URL);
    static final Diagnosis.Definition NOT_OPEN = new Diagnosis.Definition(
            NAME,
            "partition_not_open",
            "The node holding the partition's primary does not serve it yet: it is taking it over (from the"
                    + " previous owner or its replica) or gave it up after a failure.",
            "This usually resolves within seconds. If it does not, check the owner node's log and GET"
                    + " /_locks/_diagnostics.",
            HELP_URL);
    static final Diagnosis.Definition UNCONFIRMED = new Diagnosis.Definition(
            NAME,
            "owner_unconfirmed",
            "The partition's owner has not been able to confirm with the elected master for 3 s that it still"
                    + " owns the partition (no elected master, or the owner is cut off from it).",
            "Check the master_is_stable indicator and the network between the owner and the master nodes. The"
                    + " partition grants again as soon as the master confirms its owner.",
            HELP_URL);
    static final Diagnosis.Definition GRACE = new Diagnosis.Definition(
            NAME,
            "recovery_grace",
            "The partition was opened without its locks (its owner left and no copy of its state was left, or"
                    + " locks.durability is memory): it grants nothing until every lease its previous owner may"
                    + " have granted has run out (locks.recovery.grace).",
            "Wait for the grace to end (details: grace_left_ms). To avoid it, keep locks.durability: replicated"
                    + " and enough data nodes that every partition has a started replica.",
            HELP_URL);
    static final Diagnosis.Definition NO_REPLICA = new Diagnosis.Definition(
            NAME,
            "partition_without_replica",
            "The partition has no started replica, though its index asks for one.",
            "See why the replica is not assigned: GET _cluster/allocation/explain with index [" + LockIndex.NAME
                    + "], the partition as shard and primary false (allocation filters, allocation disabled, a"
                    + " node that left).",
            HELP_URL);
    static final Diagnosis.Definition NOT_REPORTING = new Diagnosis.Definition(
            NAME,
            "owner_not_reporting",
            "The partition's owner has not reported its state in the last 5 s (the indicator asks the owners"
                    + " every second while it is in use).",
            "Ask again in a moment. If it persists, GET /_locks/_diagnostics shows why the owner does not answer.",
            HELP_URL);

    static String symptom(LockPartitionsHealthIndicator.Findings f, int partitions) {
        List<String> parts = new ArrayList<>();
        count(parts, f.unavailable.size(), "has no owner", "have no owner");
        count(parts, f.notOpen.size(), "is not served by its owner yet", "are not served by their owners yet");
        count(
                parts,
                f.unconfirmed.size(),
                "has an owner the master has not confirmed",
                "have owners the master has not confirmed");
        count(parts, f.inGrace.size(), "is in recovery grace", "are in recovery grace");
        count(parts, f.withoutReplica.size(), "has no replica", "have no replica");
        count(parts, f.notReporting.size(), "has an owner that has not reported", "have owners that have not reported");
        if (parts.isEmpty()) {
            return partitions == 1
                    ? "The lock partition is available."
                    : "All " + partitions + " lock partitions are available.";
        }
        return String.join("; ", parts) + ".";
    }

    private static void count(List<String> parts, int n, String one, String many) {
        if (n > 0) {
            parts.add(n + (n == 1 ? " lock partition " + one : " lock partitions " + many));
        }
    }

    static List<HealthIndicatorImpact> impacts(LockPartitionsHealthIndicator.Findings f) {
        List<HealthIndicatorImpact> impacts = new ArrayList<>();
        if (f.unavailable.isEmpty() == false || f.notOpen.isEmpty() == false) {
            impacts.add(REFUSED);
        }
        if (f.unconfirmed.isEmpty() == false || f.inGrace.isEmpty() == false) {
            impacts.add(PAUSED);
        }
        if (f.withoutReplica.isEmpty() == false) {
            impacts.add(AT_RISK);
        }
        return impacts;
    }

    static List<Diagnosis> diagnoses(LockPartitionsHealthIndicator.Findings f, int maxAffected, ClusterState state) {
        List<Diagnosis> diagnoses = new ArrayList<>();
        add(diagnoses, UNASSIGNED, f.unavailable, maxAffected, List.of());
        add(diagnoses, NOT_OPEN, f.notOpen, maxAffected, f.owners(f.notOpen, state));
        add(diagnoses, UNCONFIRMED, f.unconfirmed, maxAffected, f.owners(f.unconfirmed, state));
        add(diagnoses, GRACE, f.inGrace, maxAffected, List.of());
        add(diagnoses, NO_REPLICA, f.withoutReplica, maxAffected, List.of());
        add(diagnoses, NOT_REPORTING, f.notReporting, maxAffected, f.owners(f.notReporting, state));
        return diagnoses;
    }

    /** One diagnosis for {@code partitions}, naming the lock index and, where they matter, the owner nodes. */
    private static void add(
            List<Diagnosis> diagnoses,
            Diagnosis.Definition definition,
            Set<Integer> partitions,
            int maxAffected,
            List<DiscoveryNode> owners) {
        if (partitions.isEmpty()) {
            return;
        }
        List<Diagnosis.Resource> resources = new ArrayList<>();
        resources.add(new Diagnosis.Resource(Diagnosis.Resource.Type.INDEX, List.of(LockIndex.NAME)));
        if (owners.isEmpty() == false) {
            resources.add(
                    new Diagnosis.Resource(owners.stream().limit(maxAffected).toList()));
        }
        diagnoses.add(new Diagnosis(definition, resources));
    }
}
