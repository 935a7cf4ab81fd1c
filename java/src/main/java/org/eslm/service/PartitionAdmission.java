package org.eslm.service;

import java.util.Map;
import java.util.function.Supplier;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.CoreClient;
import org.eslm.core.LockPartitionUnavailableException;
import org.eslm.settings.LockSettings;

/**
 * Whether a request may reach a partition's table on this node, and the retryable refusal when it
 * may not: the partition moved away or is moving, the node is stopping, or this owner's right to
 * serve is not current (docs/ARCHITECTURE.md "Cut-off owners", "Silent owners").
 */
final class PartitionAdmission {
    private final CoreClient client;
    private final PartitionGate partitions;
    private final NodeShutdown shutdown;
    private final Supplier<String> localNodeName;

    PartitionAdmission(
            CoreClient client, PartitionGate partitions, NodeShutdown shutdown, Supplier<String> localNodeName) {
        this.client = client;
        this.partitions = partitions;
        this.shutdown = shutdown;
        this.localNodeName = localNodeName;
    }

    /**
     * Why a request may not run on {@code partition} here, or {@code null} when it may. Node-wide
     * reads ({@link NativeLockCore#ALL_PARTITIONS}) always may. Reads of one partition are refused
     * too when its owner is not confirmed: a cut-off owner's table may be stale, and a new owner
     * may serve the same keys.
     */
    RuntimeException refusal(int partition) {
        if (partition == NativeLockCore.ALL_PARTITIONS) {
            return null;
        }
        if (partitions.serves(partition) == false || shutdown.begun()) {
            return notServed(partition);
        }
        if (partitions.confirmed(partition) == false) {
            return new LockPartitionUnavailableException(unconfirmed(partition), retryUnconfirmedMs());
        }
        return null;
    }

    /** The retryable refusal of a partition this node does not serve (now). */
    RuntimeException notServed(int partition) {
        return new LockPartitionUnavailableException(
                "lock partition [" + partition + "] is not served by node [" + localNodeName.get()
                        + "] (it is moving); retry",
                0);
    }

    /** A call on one partition; if the partition closed under it, the failure is the retryable one. */
    Map<String, Object> callRouted(NativeOp op, int partition, String argsJson) {
        try {
            return client.call(op, partition, argsJson);
        } catch (IllegalArgumentException e) {
            if (partition >= 0 && partitions.serves(partition) == false) {
                throw notServed(partition);
            }
            throw e;
        }
    }

    /** Why this node does not serve {@code partition} now although it owns it: its lease is not current. */
    private String unconfirmed(int partition) {
        String node = "node [" + localNodeName.get() + "]";
        if (partitions.copyLeases()) {
            return node + " has no current lease on lock partition [" + partition + "]: its copies have not"
                    + " acknowledged a batch sent in the last " + LockSettings.COPY_LEASE.getStringRep() + "; retry";
        }
        return node + " cannot confirm with the elected master that it still owns lock partition [" + partition
                + "]; retry";
    }

    /**
     * When to ask again a partition whose lease is not current: with copy leases, the next
     * heartbeat may renew it (a copy just failed, or answering again), so the coordinator retries
     * then instead of waiting for a cluster state that a publication to a silent node may hold
     * back for seconds; without them, on the next cluster state (0: no hint).
     */
    private long retryUnconfirmedMs() {
        return partitions.copyLeases() ? LockSettings.HEARTBEAT_INTERVAL.millis() : 0;
    }
}
