package org.eslm.service;

import org.elasticsearch.action.ActionListener;

/**
 * Where {@link Commits} sends a partition's batches: Elasticsearch's replication of the
 * partition's shard, implemented by {@code org.eslm.replication.LockReplicationAction}
 * (docs/ARCHITECTURE.md "Replication"). An interface so the service stays below the replication code.
 */
public interface ReplicationChannel {
    /**
     * The text of a heartbeat: a batch with no changes, which copies acknowledge without applying
     * or persisting anything (docs/ARCHITECTURE.md "Silent owners").
     */
    String HEARTBEAT = "";

    /**
     * Sends one batch of {@code partition} in {@code epoch} (its primary term) to every in-sync
     * copy of its shard, this one included (which persists it); completes {@code listener} once
     * every copy has it, or fails it when this node is no longer the partition's primary in that
     * epoch.
     *
     * @param full whether {@code batchJson} is the whole state ({@code {"full": ..}}) rather than
     *     the changes since the previous batch ({@code {"delta": ..}})
     */
    void ship(int partition, long epoch, boolean full, String batchJson, ActionListener<Void> listener);
}
