package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexShardRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.index.shard.ShardId;
import org.eslm.NativeTestSupport;
import org.eslm.ShardTesting;
import org.eslm.service.PendingPromotions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Which primary a master's decision about a silent owner still fails when its task runs
 * (docs/ARCHITECTURE.md "Silent owners"): the same copy, still the active primary, in the same
 * primary term; anything newer is left alone.
 */
class SilentPrimaryFailureTest {
    private static final String UUID = "lock-index-uuid";
    private static final ShardId SHARD = new ShardId(LockIndex.NAME, UUID, 0);

    @BeforeAll
    static void logging() {
        NativeTestSupport.setUp(); // building index metadata needs Elasticsearch's logging
    }

    private static IndexMetadata index(String uuid, long term) {
        return ShardTesting.lockIndex(uuid, term);
    }

    private static ShardRouting copy(boolean primary, String node, boolean started) {
        return ShardTesting.copy(SHARD, primary, node, started);
    }

    private static IndexShardRoutingTable shard(ShardRouting... copies) {
        return ShardTesting.shard(SHARD, copies);
    }

    private static SilentPrimaryFailure.FailTask task(ShardRouting copy, long epoch) {
        return new SilentPrimaryFailure.FailTask(
                SHARD, copy.allocationId().getId(), epoch, "silent", new PendingPromotions());
    }

    @Test
    void theActivePrimaryInTheSameTermIsFailed() {
        ShardRouting primary = copy(true, "owner", true);
        assertEquals(
                primary,
                SilentPrimaryFailure.stillPrimary(
                        index(UUID, 3), shard(primary, copy(false, "other", true)), task(primary, 3)));
    }

    @Test
    void aPrimaryInANewerTermIsLeftAlone() {
        // A promotion since the decision: the master in charge already acted.
        ShardRouting primary = copy(true, "owner", true);
        assertNull(SilentPrimaryFailure.stillPrimary(index(UUID, 4), shard(primary), task(primary, 3)));
    }

    @Test
    void aCopyThatIsNoLongerTheActivePrimaryIsLeftAlone() {
        ShardRouting primary = copy(true, "owner", true);
        ShardRouting replica = copy(false, "other", true);
        IndexShardRoutingTable shard = shard(primary, replica);
        assertNull(SilentPrimaryFailure.stillPrimary(index(UUID, 3), shard, task(replica, 3)));
        ShardRouting initializing = copy(true, "owner", false);
        assertNull(SilentPrimaryFailure.stillPrimary(index(UUID, 3), shard(initializing), task(initializing, 3)));
        ShardRouting gone = copy(true, "elsewhere", true);
        assertNull(SilentPrimaryFailure.stillPrimary(index(UUID, 3), shard, task(gone, 3)));
    }

    @Test
    void aRecreatedLockIndexIsLeftAlone() {
        ShardRouting primary = copy(true, "owner", true);
        assertNull(SilentPrimaryFailure.stillPrimary(index("another-uuid", 3), shard(primary), task(primary, 3)));
    }
}
