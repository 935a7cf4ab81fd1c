package org.eslm.client;

import java.util.Map;

/**
 * The cluster's {@code lock_partitions} health indicator ({@code GET
 * _health_report/lock_partitions}, docs/API.md "Health"), as the node asked computed it.
 *
 * @param status {@code green}, {@code yellow}, {@code red} or {@code unknown}: the worst finding
 *     over every lock partition
 * @param symptom the indicator's sentence, e.g. "The lock partition is available."
 * @param details its {@code details}: the number of {@code partitions}, the {@code durability},
 *     and per finding ({@code unavailable}, {@code not_open}, {@code unconfirmed}, {@code
 *     in_grace}, {@code without_replica}, {@code not_reporting}) its count and partitions
 */
public record PartitionHealth(String status, String symptom, Map<String, Object> details) {
    public PartitionHealth {
        details = Map.copyOf(details);
    }

    /** Whether every partition is served by a confirmed owner, not in grace, with its replicas. */
    public boolean isGreen() {
        return "green".equals(status);
    }
}
