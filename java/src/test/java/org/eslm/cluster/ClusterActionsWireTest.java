package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.eslm.WireTesting;
import org.junit.jupiter.api.Test;

/** The cluster-internal transport actions on the wire: hand-over and ownership check (replication: ReplicationWireTest). */
class ClusterActionsWireTest {
    static PartitionRequest randomPartitionRequest(Random r) {
        return new PartitionRequest(WireTesting.string(r), r.nextInt(1024));
    }

    /** The hand-over's form with the asker's epoch ({@link PartitionHandoffAction#IN_EPOCH}). */
    static PartitionRequest randomRequestWithEpoch(Random r) {
        return new PartitionRequest(WireTesting.string(r), r.nextInt(1024), r.nextLong(0, Long.MAX_VALUE));
    }

    /** With a snapshot, or none (the previous owner has nothing to hand over). */
    static PartitionStateResponse randomStateResponse(Random r) {
        return new PartitionStateResponse(r.nextBoolean() ? null : "{\"epoch\":" + r.nextInt(100) + "}");
    }

    static OwnershipCheckAction.Request randomOwnershipRequest(Random r) {
        Map<Integer, Long> epochs = new HashMap<>();
        int n = r.nextInt(5);
        for (int i = 0; i < n; i++) {
            epochs.put(r.nextInt(64), (long) r.nextInt(1 << 20));
        }
        return new OwnershipCheckAction.Request(
                WireTesting.string(r), WireTesting.string(r), epochs, r.nextLong(0, Long.MAX_VALUE));
    }

    static OwnershipCheckAction.Response randomOwnershipResponse(Random r) {
        Map<Integer, Boolean> owned = new HashMap<>();
        int n = r.nextInt(5);
        for (int i = 0; i < n; i++) {
            owned.put(r.nextInt(64), r.nextBoolean());
        }
        return new OwnershipCheckAction.Response(owned);
    }

    @Test
    void handoffRequestsAndResponsesRoundTrip() throws IOException {
        WireTesting.assertRoundTrips(ClusterActionsWireTest::randomPartitionRequest, PartitionRequest::new);
        WireTesting.assertRoundTrips(ClusterActionsWireTest::randomRequestWithEpoch, PartitionRequest::readWithEpoch);
        WireTesting.assertRoundTrips(ClusterActionsWireTest::randomStateResponse, PartitionStateResponse::new);
        PartitionStateResponse none = WireTesting.assertRoundTrip(
                new PartitionStateResponse((String) null), PartitionStateResponse::new, "no snapshot");
        assertNull(none.stateJson());
    }

    @Test
    void ownershipCheckRequestsAndResponsesRoundTrip() throws IOException {
        WireTesting.assertRoundTrips(ClusterActionsWireTest::randomOwnershipRequest, OwnershipCheckAction.Request::new);
        WireTesting.assertRoundTrips(
                ClusterActionsWireTest::randomOwnershipResponse, OwnershipCheckAction.Response::new);
        OwnershipCheckAction.Response denied = WireTesting.assertRoundTrip(
                new OwnershipCheckAction.Response(Map.of(0, false, 3, true)),
                OwnershipCheckAction.Response::new,
                "mixed answer");
        assertEquals(Map.of(0, false, 3, true), denied.owned());
    }

    /**
     * The plugin's own messages are the same bytes to a peer of any transport version: nothing in
     * them is gated on Elasticsearch's numbers, which differ between 8.19 and 9.x
     * (docs/ARCHITECTURE.md "Formats and versions").
     */
    @Test
    void theClusterMessagesAreTheSameBytesForEveryPeerVersion() throws IOException {
        WireTesting.assertSameBytesForEveryPeer(ClusterActionsWireTest::randomPartitionRequest);
        WireTesting.assertSameBytesForEveryPeer(ClusterActionsWireTest::randomRequestWithEpoch);
        WireTesting.assertSameBytesForEveryPeer(ClusterActionsWireTest::randomStateResponse);
        WireTesting.assertSameBytesForEveryPeer(ClusterActionsWireTest::randomOwnershipRequest);
        WireTesting.assertSameBytesForEveryPeer(ClusterActionsWireTest::randomOwnershipResponse);
    }
}
