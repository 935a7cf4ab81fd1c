package org.eslm.service;

import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;
import java.util.function.LongConsumer;
import java.util.function.ObjLongConsumer;
import org.eslm.core.CoreClient;

/**
 * Builds the parts of replication that run beside the lock service's core
 * ({@code org.eslm.replication.ReplicationWiring}): handed to {@link LockService} by the plugin, so
 * that the service names only {@link Commits} and {@link Standbys} and stays below the replication
 * code (docs/ARCHITECTURE.md, the package layers).
 */
public interface ReplicationParts {
    /**
     * The group commit of the partitions served here, on {@code core}: {@code deliver} hands a
     * committed answer's events on (with the {@link System#nanoTime()} its call started at, from
     * which its grants are timed), {@code notServed} is the retryable failure of a partition no
     * longer served here, {@code peerFormat} the state format every node reads (batches are
     * written in it), {@code gate} renews the owner's lease when a batch reached every copy,
     * {@code roundTrips} takes each batch's round trip to every copy, in nanoseconds.
     */
    Commits commits(
            CoreClient core,
            ObjLongConsumer<Map<String, Object>> deliver,
            IntFunction<RuntimeException> notServed,
            IntSupplier peerFormat,
            PartitionGate gate,
            LongConsumer roundTrips);

    /** The standby tables this node keeps as a replica, on {@code core}. */
    Standbys standbys(CoreClient core);

    /**
     * Why {@code partition}'s state cannot be persisted on this node now (its state log failed to
     * be written or forced, and no batch was persisted since: docs/RELIABILITY.md "Disk faults"),
     * or {@code null}: the reason its 503 answers give.
     */
    String persistenceFailure(int partition);
}
