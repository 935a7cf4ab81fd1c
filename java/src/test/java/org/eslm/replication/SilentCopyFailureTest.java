package org.eslm.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Random;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.ElasticsearchTimeoutException;
import org.elasticsearch.cluster.routing.IndexShardRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.index.Index;
import org.elasticsearch.index.shard.ShardId;
import org.elasticsearch.transport.RemoteTransportException;
import org.eslm.NativeTestSupport;
import org.eslm.ShardTesting;
import org.eslm.WireTesting;
import org.eslm.cluster.LockIndex;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Which copies the master fails with a silent one (docs/ARCHITECTURE.md "Silent owners"): only
 * started replicas on that node, never a primary (the table's keeper) nor a recovering copy.
 */
class SilentCopyFailureTest {
    private static final ShardId SHARD = new ShardId(new Index(LockIndex.NAME, "uuid"), 1);

    @BeforeAll
    static void logging() {
        NativeTestSupport.setUp(); // Elasticsearch's exceptions need its logging
    }

    private static ShardRouting copy(boolean primary, String node, boolean started) {
        return ShardTesting.copy(SHARD, primary, node, started);
    }

    private static IndexShardRoutingTable shard(ShardRouting... copies) {
        return ShardTesting.shard(SHARD, copies);
    }

    @Test
    void theStartedReplicaOnTheSilentNodeIsFailed() {
        ShardRouting replica = copy(false, "silent", true);
        assertEquals(replica, SilentCopyFailure.replicaToFail(shard(copy(true, "owner", true), replica), "silent"));
    }

    @Test
    void aPrimaryOnTheSilentNodeIsLeftToTheWatchForSilentOwners() {
        assertNull(SilentCopyFailure.replicaToFail(
                shard(copy(true, "silent", true), copy(false, "other", true)), "silent"));
    }

    @Test
    void nothingIsFailedOnANodeWithoutACopyOrWithACopyStillRecovering() {
        assertNull(SilentCopyFailure.replicaToFail(
                shard(copy(true, "owner", true), copy(false, "other", true)), "silent"));
        assertNull(SilentCopyFailure.replicaToFail(
                shard(copy(true, "owner", true), copy(false, "silent", false)), "silent"));
    }

    @Test
    void onlyATimeoutCountsAsSilence() {
        assertTrue(SilentCopyFailure.silence(new ElasticsearchTimeoutException("timed out after [1.2s]")));
        assertTrue(SilentCopyFailure.silence(
                new RemoteTransportException("wrapped", new ElasticsearchTimeoutException("timed out"))));
        assertFalse(SilentCopyFailure.silence(new ElasticsearchException("the copy could not persist the batch")));
    }

    static SilentCopyFailure.Request randomRequest(Random r) {
        ShardId shard = new ShardId(new Index(LockIndex.NAME, WireTesting.string(r)), r.nextInt(1024));
        return new SilentCopyFailure.Request(
                shard, WireTesting.string(r), r.nextLong(0, Long.MAX_VALUE), WireTesting.string(r));
    }

    @Test
    void requestsRoundTripAndAreTheSameBytesForEveryPeerVersion() throws IOException {
        WireTesting.assertRoundTrips(SilentCopyFailureTest::randomRequest, SilentCopyFailure.Request::new);
        WireTesting.assertSameBytesForEveryPeer(SilentCopyFailureTest::randomRequest);
    }
}
