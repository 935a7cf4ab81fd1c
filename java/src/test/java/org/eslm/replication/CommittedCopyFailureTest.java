package org.eslm.replication;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.elasticsearch.cluster.ClusterName;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.metadata.Metadata;
import org.elasticsearch.index.shard.ShardId;
import org.eslm.NativeTestSupport;
import org.eslm.ShardTesting;
import org.eslm.cluster.LockIndex;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * When a batch may go on without the master's answer to the failure of a copy: only in a cluster
 * state where the same primary term serves and the copy is out of the in-sync set.
 */
class CommittedCopyFailureTest {
    private static final String UUID = "lock-index-uuid";
    private static final ShardId SHARD = new ShardId(LockIndex.NAME, UUID, 0);

    @BeforeAll
    static void logging() {
        NativeTestSupport.setUp(); // building index metadata needs Elasticsearch's logging
    }

    // Metadata.Builder#put(IndexMetadata, boolean) puts into the default project on 9.x, where it
    // is deprecated for removal; the one call that reads the same on 8.19 and on 9.x.
    @SuppressWarnings("removal")
    private static ClusterState state(String uuid, long term, String... inSync) {
        IndexMetadata index = ShardTesting.lockIndex(uuid, term, inSync);
        return ClusterState.builder(ClusterName.DEFAULT)
                .metadata(Metadata.builder().put(index, false))
                .build();
    }

    @Test
    void theCopyOutOfTheInSyncSetInTheSameTermIsCommitted() {
        assertTrue(CommittedCopyFailure.committed(state(UUID, 3, "primary"), SHARD, "replica", 3));
    }

    @Test
    void aCopyStillInSyncIsNot() {
        assertFalse(CommittedCopyFailure.committed(state(UUID, 3, "primary", "replica"), SHARD, "replica", 3));
    }

    @Test
    void anotherPrimaryTermIsNot() {
        // A new primary (always a higher term): this one may no longer be the primary at all.
        assertFalse(CommittedCopyFailure.committed(state(UUID, 4, "replica"), SHARD, "primary", 3));
    }

    @Test
    void aRecreatedIndexOrNoIndexIsNot() {
        assertFalse(CommittedCopyFailure.committed(state("another-uuid", 3, "primary"), SHARD, "replica", 3));
        assertFalse(CommittedCopyFailure.committed(
                ClusterState.builder(ClusterName.DEFAULT).build(), SHARD, "replica", 3));
    }
}
