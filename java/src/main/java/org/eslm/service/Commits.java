package org.eslm.service;

import java.util.Map;
import java.util.function.IntConsumer;
import org.elasticsearch.action.ActionListener;

/**
 * The replication of the partitions this node serves, as the lock service uses it: nothing a
 * change decided is told to anyone before its batch reached every in-sync copy of the partition's
 * shard (docs/ARCHITECTURE.md "Replication"). Built by {@link ReplicationParts}
 * ({@code org.eslm.replication.GroupCommit}), so that the service stays below the replication code.
 */
public interface Commits {
    /** Connects the channel (built after the service) and what gives up a partition whose batch failed. */
    void connect(ReplicationChannel channel, IntConsumer onFailure);

    /** {@code partition} was opened here in {@code epoch}: its first batch, the whole state, goes out now. */
    void opened(int partition, long epoch);

    /** {@code partition} closed here: answers waiting for its batches fail as retryable. */
    void closed(int partition);

    /** Whether {@code partition} is replicated from here. */
    boolean replicates(int partition);

    /** The round trips of {@code partition}'s batches ({@code replication.BatchTimes}), or null if not replicated here. */
    Map<String, Object> batchTimes(int partition);

    /** The next batch of {@code partition} carries its whole state (a copy has none); sent now. */
    void requestFull(int partition, ActionListener<Void> whenSent);

    /**
     * Completes {@code listener} once every change the core made to {@code partition} before
     * this call is on every in-sync copy; fails it (retryable) when that cannot happen here.
     */
    void afterCommit(int partition, ActionListener<Void> listener);

    /**
     * Sends {@code partition}'s copies an empty batch when nothing went to them for
     * {@link org.eslm.bridge.NativeBounds#HEARTBEAT_INTERVAL_MS} and none is in flight: their acknowledgement renews
     * this owner's lease while it has nothing to replicate (docs/ARCHITECTURE.md "Silent owners").
     * Only while copy leases are in force: a copy of an older plugin would refuse it.
     */
    void heartbeat(int partition);
}
