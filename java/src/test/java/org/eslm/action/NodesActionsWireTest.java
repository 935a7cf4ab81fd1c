package org.eslm.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.elasticsearch.action.FailedNodeException;
import org.elasticsearch.cluster.ClusterName;
import org.elasticsearch.common.bytes.BytesArray;
import org.elasticsearch.common.io.stream.BytesStreamOutput;
import org.eslm.NativeTestSupport;
import org.eslm.WireTesting;
import org.eslm.core.BridgeJson;
import org.eslm.service.ListedLocks;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The requests and responses of the nodes actions ({@code _stats}, the lock list): node-level
 * ones on the wire, failed nodes included; the top-level requests, which Elasticsearch never
 * sends, refuse to be written.
 */
class NodesActionsWireTest {
    @BeforeAll
    static void setUp() {
        NativeTestSupport.setUp();
    }

    private static List<FailedNodeException> failures(Random r) {
        List<FailedNodeException> failures = new ArrayList<>();
        int n = r.nextInt(3);
        for (int i = 0; i < n; i++) {
            failures.add(new FailedNodeException(
                    WireTesting.string(r), WireTesting.string(r), new IllegalStateException(WireTesting.string(r))));
        }
        return failures;
    }

    static NodeLockStatsResponse randomNodeStats(Random r) {
        return new NodeLockStatsResponse(WireTesting.node(r), WireTesting.genericMap(r));
    }

    static LockStatsResponse randomStats(Random r) {
        List<NodeLockStatsResponse> nodes = new ArrayList<>();
        int n = r.nextInt(4);
        for (int i = 0; i < n; i++) {
            nodes.add(randomNodeStats(r));
        }
        return new LockStatsResponse(new ClusterName(WireTesting.string(r)), nodes, failures(r));
    }

    static TransportListLocksAction.NodeResponse randomNodeLocks(Random r) {
        List<ListedLocks.Page> pages = new ArrayList<>();
        for (int p = r.nextInt(3); p > 0; p--) {
            List<ListedLocks.Lock> locks = new ArrayList<>();
            for (int i = r.nextInt(4); i > 0; i--) {
                String json = BridgeJson.toJson(WireTesting.genericMap(r));
                locks.add(new ListedLocks.Lock(
                        WireTesting.string(r), WireTesting.string(r), WireTesting.string(r), new BytesArray(json)));
            }
            ListedLocks.Cursor next = r.nextBoolean()
                    ? null
                    : new ListedLocks.Cursor(WireTesting.string(r), WireTesting.string(r), WireTesting.string(r));
            pages.add(new ListedLocks.Page(r.nextInt(64), locks, next));
        }
        return new TransportListLocksAction.NodeResponse(WireTesting.node(r), pages);
    }

    static TransportListLocksAction.Response randomLocks(Random r) {
        List<TransportListLocksAction.NodeResponse> nodes = new ArrayList<>();
        int n = r.nextInt(4);
        for (int i = 0; i < n; i++) {
            nodes.add(randomNodeLocks(r));
        }
        return new TransportListLocksAction.Response(
                new ClusterName(WireTesting.string(r)), nodes, failures(r), 1 + r.nextInt(10_000));
    }

    @Test
    void statsNodeRequestsAndResponsesRoundTrip() throws IOException {
        WireTesting.assertRoundTrips(r -> new WholeReportNodeRequest(), WholeReportNodeRequest::new);
        WireTesting.assertRoundTrips(NodesActionsWireTest::randomNodeStats, in -> new NodeLockStatsResponse(in, null));
    }

    @Test
    void statsResponsesRoundTripWithTheirFailedNodes() throws IOException {
        WireTesting.assertRoundTrips(NodesActionsWireTest::randomStats, LockStatsResponse::new);
    }

    static LockDiagnosticsResponse randomDiagnostics(Random r) {
        List<NodeLockDiagnosticsResponse> nodes = new ArrayList<>();
        for (int i = r.nextInt(4); i > 0; i--) {
            nodes.add(new NodeLockDiagnosticsResponse(WireTesting.node(r), WireTesting.genericMap(r)));
        }
        return new LockDiagnosticsResponse(new ClusterName(WireTesting.string(r)), nodes, failures(r));
    }

    @Test
    void diagnosticsNodeRequestsAndResponsesRoundTripWithTheirFailedNodes() throws IOException {
        WireTesting.assertRoundTrips(r -> new WholeReportNodeRequest(), WholeReportNodeRequest::new);
        WireTesting.assertRoundTrips(
                r -> new NodeLockDiagnosticsResponse(WireTesting.node(r), WireTesting.genericMap(r)),
                in -> new NodeLockDiagnosticsResponse(in, null));
        WireTesting.assertRoundTrips(NodesActionsWireTest::randomDiagnostics, LockDiagnosticsResponse::new);
        LockDiagnosticsRequest request = new LockDiagnosticsRequest("a");
        assertEquals(new LockDiagnosticsRequest("a"), request);
        assertNotEquals(new LockDiagnosticsRequest("b"), request);
        assertLocalOnly(() -> request.writeTo(new BytesStreamOutput()));
    }

    @Test
    void listNodeRequestsAndResponsesRoundTrip() throws IOException {
        WireTesting.assertRoundTrips(
                r -> new TransportListLocksAction.NodeRequest(
                        "{\"owner\":\"" + WireTesting.string(r) + "\",\"size\":" + r.nextInt(100) + "}"),
                TransportListLocksAction.NodeRequest::new);
        WireTesting.assertRoundTrips(
                NodesActionsWireTest::randomNodeLocks, in -> new TransportListLocksAction.NodeResponse(in, null));
    }

    /** The node requests are the plugin's own: the same bytes to a peer of any transport version. */
    @Test
    void nodeRequestsAreTheSameBytesForEveryPeerVersion() throws IOException {
        WireTesting.assertSameBytesForEveryPeer(r -> new WholeReportNodeRequest());
        WireTesting.assertSameBytesForEveryPeer(
                r -> new TransportListLocksAction.NodeRequest("{\"owner\":\"" + WireTesting.string(r) + "\"}"));
    }

    @Test
    void listResponsesRoundTripWithTheirFailedNodesAndSize() throws IOException {
        WireTesting.assertRoundTrips(NodesActionsWireTest::randomLocks, TransportListLocksAction.Response::new);
    }

    /** Elasticsearch refuses to write a local-only request: an assertion with {@code -ea}, else an exception. */
    private static void assertLocalOnly(org.junit.jupiter.api.function.Executable write) {
        Throwable refused = assertThrows(Throwable.class, write);
        assertTrue(
                refused instanceof AssertionError || refused instanceof UnsupportedOperationException,
                "refused with " + refused);
    }

    @Test
    void topLevelNodesRequestsStayOnTheirNode() {
        LockStatsRequest stats = new LockStatsRequest("a", "b");
        assertEquals(new LockStatsRequest("a", "b"), stats);
        assertEquals(new LockStatsRequest("a", "b").hashCode(), stats.hashCode());
        assertNotEquals(new LockStatsRequest("a"), stats);
        assertLocalOnly(() -> stats.writeTo(new BytesStreamOutput()));

        TransportListLocksAction.Request list = new TransportListLocksAction.Request("{\"size\":5}", 5);
        assertEquals(new TransportListLocksAction.Request("{\"size\":5}", 5), list);
        assertEquals(new TransportListLocksAction.Request("{\"size\":5}", 5).hashCode(), list.hashCode());
        assertNotEquals(new TransportListLocksAction.Request("{\"size\":6}", 6), list);
        assertLocalOnly(() -> list.writeTo(new BytesStreamOutput()));
    }
}
