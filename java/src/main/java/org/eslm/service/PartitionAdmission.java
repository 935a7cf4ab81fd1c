package org.eslm.service;

import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.CoreClient;
import org.eslm.core.LockPartitionUnavailableException;

/**
 * Whether a request may reach a partition's table on this node, and the retryable refusal when it
 * may not: the partition moved away or is moving, or the node is stopping. Whether this owner's
 * right to serve is current the core decides at the call (docs/ARCHITECTURE.md "Silent owners").
 */
final class PartitionAdmission {
    private final CoreClient client;
    private final PartitionGate partitions;
    private final NodeShutdown shutdown;
    private final Supplier<String> localNodeName;
    /** Why a partition's state cannot be persisted here now, or null (ReplicationParts). */
    private final IntFunction<String> persistenceFailure;

    /**
     * When to ask again a partition whose state log failed: the owner reopens it a second after the
     * failed batch (cluster.PartitionManager) and tries to persist its whole state then.
     */
    static final long PERSISTENCE_RETRY_MS = 1000;

    PartitionAdmission(
            CoreClient client,
            PartitionGate partitions,
            NodeShutdown shutdown,
            Supplier<String> localNodeName,
            IntFunction<String> persistenceFailure) {
        this.client = client;
        this.partitions = partitions;
        this.shutdown = shutdown;
        this.localNodeName = localNodeName;
        this.persistenceFailure = persistenceFailure;
    }

    /**
     * Why a request may not run on {@code partition} here, or {@code null} when it may. Node-wide
     * reads ({@link NativeLockCore#ALL_PARTITIONS}) always may. A partition this node serves but
     * whose lease is not current (a cut-off owner's table may be stale, and a new owner may serve
     * the same keys) is refused by the core itself, with the reason and when to ask again.
     */
    RuntimeException refusal(int partition) {
        if (partition == NativeLockCore.ALL_PARTITIONS) {
            return null;
        }
        if (partitions.serves(partition) == false || shutdown.begun()) {
            return notServed(partition);
        }
        return null; // whether this node's lease is current, the core answers at the call itself
    }

    /**
     * The retryable refusal of a partition this node does not serve (now). When its state log
     * failed (a full disk, an I/O error), the refusal names that error and asks again in a second
     * (docs/RELIABILITY.md "Disk faults"): the partition is given up after each batch that could
     * not be persisted, and reopened, until one is.
     */
    RuntimeException notServed(int partition) {
        String failure = partition >= 0 ? persistenceFailure.apply(partition) : null;
        if (failure != null) {
            return new LockPartitionUnavailableException(
                    "lock partition [" + partition + "] cannot persist its state on node [" + localNodeName.get()
                            + "]: it " + failure + "; retry",
                    PERSISTENCE_RETRY_MS);
        }
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
}
