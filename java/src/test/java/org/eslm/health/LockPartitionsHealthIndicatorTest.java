package org.eslm.health;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.elasticsearch.health.Diagnosis;
import org.elasticsearch.health.HealthIndicatorDetails;
import org.elasticsearch.health.HealthIndicatorImpact;
import org.elasticsearch.health.HealthIndicatorResult;
import org.elasticsearch.health.HealthStatus;
import org.elasticsearch.health.SimpleHealthIndicatorDetails;
import org.junit.jupiter.api.Test;

/**
 * How the {@code lock_partitions} indicator reads partitions (docs/API.md "Health"): each finding
 * gives its status, counts, partition ids, impact and diagnosis; the worst finding decides.
 */
class LockPartitionsHealthIndicatorTest {
    private static final OwnerReports.Served SERVING = new OwnerReports.Served(1, true, 0);

    private static PartitionView healthy(int id) {
        return new PartitionView(id, "n1", null, 1, 1, true, SERVING);
    }

    private static HealthIndicatorResult evaluate(boolean replicated, PartitionView... views) {
        return LockPartitionsHealthIndicator.evaluate(views, replicated, true, 1000, null);
    }

    private static Map<String, Object> details(HealthIndicatorResult r) {
        return ((SimpleHealthIndicatorDetails) r.details()).details();
    }

    private static List<String> diagnoses(HealthIndicatorResult r) {
        return r.diagnosisList().stream().map(d -> d.definition().id()).toList();
    }

    private static List<String> impacts(HealthIndicatorResult r) {
        return r.impacts().stream().map(HealthIndicatorImpact::id).toList();
    }

    @Test
    void servedConfirmedAndReplicatedPartitionsAreGreen() {
        HealthIndicatorResult r = evaluate(true, healthy(0), healthy(1));
        assertEquals(HealthStatus.GREEN, r.status());
        assertEquals("All 2 lock partitions are available.", r.symptom());
        assertEquals(List.of(), r.impacts());
        assertEquals(List.of(), r.diagnosisList());
        assertEquals(0, details(r).get("unavailable"));
        assertEquals("lock_partitions", r.name());
    }

    @Test
    void aPartitionWithoutOwnerOrNotOpenIsRed() {
        HealthIndicatorResult r = evaluate(
                true,
                healthy(0),
                new PartitionView(1, null, null, 1, 0, false, null),
                new PartitionView(2, "n2", null, 1, 1, true, null));
        assertEquals(HealthStatus.RED, r.status());
        assertEquals(List.of(1), details(r).get("unavailable_partitions"));
        assertEquals(List.of(2), details(r).get("not_open_partitions"));
        assertEquals(List.of("partition_unassigned", "partition_not_open"), diagnoses(r));
        assertEquals(List.of("lock_requests_refused"), impacts(r));
        assertEquals("1 lock partition has no owner; 1 lock partition is not served by its owner yet.", r.symptom());
    }

    @Test
    void unconfirmedInGraceAndWithoutReplicaAreYellow() {
        HealthIndicatorResult r = evaluate(
                true,
                new PartitionView(0, "n1", null, 1, 1, true, new OwnerReports.Served(2, false, 0)),
                new PartitionView(1, "n1", null, 1, 1, true, new OwnerReports.Served(2, true, 4200)),
                new PartitionView(2, "n1", null, 1, 0, true, SERVING));
        assertEquals(HealthStatus.YELLOW, r.status());
        Map<String, Object> d = details(r);
        assertEquals(List.of(0), d.get("unconfirmed_partitions"));
        assertEquals(List.of(1), d.get("in_grace_partitions"));
        assertEquals(Map.of("1", 4200L), d.get("grace_left_ms"));
        assertEquals(List.of(2), d.get("without_replica_partitions"));
        assertEquals(List.of("owner_unconfirmed", "recovery_grace", "partition_without_replica"), diagnoses(r));
        assertEquals(List.of("lock_grants_paused", "lock_partitions_at_risk"), impacts(r));
        for (Diagnosis diagnosis : r.diagnosisList()) {
            assertTrue(diagnosis.definition().cause().isEmpty() == false);
            assertTrue(diagnosis.definition().action().isEmpty() == false);
            assertEquals(HealthFindings.HELP_URL, diagnosis.definition().helpURL());
        }
    }

    @Test
    void replicasDoNotMatterWithMemoryDurability() {
        HealthIndicatorResult r = evaluate(false, new PartitionView(0, "n1", null, 1, 0, true, SERVING));
        assertEquals(HealthStatus.GREEN, r.status());
        assertEquals("memory", details(r).get("durability"));
    }

    @Test
    void anOwnerWithoutAFreshReportIsUnknownUnlessSomethingIsWorse() {
        PartitionView silent = new PartitionView(0, "n1", null, 1, 1, false, null);
        HealthIndicatorResult r = evaluate(true, silent);
        assertEquals(HealthStatus.UNKNOWN, r.status());
        assertEquals(List.of("owner_not_reporting"), diagnoses(r));
        HealthIndicatorResult worse = evaluate(true, silent, new PartitionView(1, null, null, 1, 0, false, null));
        assertEquals(HealthStatus.RED, worse.status());
    }

    @Test
    void withoutTheIndexAndWithoutVerbose() {
        HealthIndicatorResult missing = LockPartitionsHealthIndicator.evaluate(null, true, true, 1000, null);
        assertEquals(HealthStatus.RED, missing.status());
        assertEquals(List.of("lock_index_missing"), diagnoses(missing));
        HealthIndicatorResult brief = LockPartitionsHealthIndicator.evaluate(
                new PartitionView[] {new PartitionView(0, null, null, 1, 0, false, null)}, true, false, 1000, null);
        assertEquals(HealthStatus.RED, brief.status());
        assertEquals(HealthIndicatorDetails.EMPTY, brief.details());
        assertEquals(List.of(), brief.diagnosisList());
        assertEquals(List.of("lock_requests_refused"), impacts(brief));
    }

    @Test
    void readsAnOwnersDiagnostics() {
        Map<String, Object> diagnostics = Map.of(
                "core",
                Map.of(
                        "partitions",
                        List.of(
                                Map.of("id", 0, "epoch", 3, "state", "active", "confirmed", true, "grace_left_ms", 0),
                                Map.of(
                                        "id",
                                        2,
                                        "epoch",
                                        1,
                                        "state",
                                        "grace",
                                        "confirmed",
                                        false,
                                        "grace_left_ms",
                                        90))));
        assertEquals(
                Map.of(0, new OwnerReports.Served(3, true, 0), 2, new OwnerReports.Served(1, false, 90)),
                OwnerReports.served(diagnostics));
        assertEquals(Map.of(), OwnerReports.served(Map.of()));
    }
}
