package org.eslm.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.node.NodeClosedException;
import org.elasticsearch.transport.ConnectTransportException;
import org.elasticsearch.transport.NodeDisconnectedException;
import org.elasticsearch.transport.NodeNotConnectedException;
import org.elasticsearch.transport.RemoteTransportException;
import org.eslm.NativeTestSupport;
import org.eslm.WireTesting;
import org.eslm.core.LockConflictException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The coordinator's rules for an owner that cannot serve (docs/ARCHITECTURE.md "The path of one
 * request"): a refusal without a hint waits for the next cluster state; a short hint is waited out
 * within the routing budget, a longer one (a recovery grace) only within the request's own wait;
 * anything else is answered 503. A send that could not reach the owner's node is routed again,
 * whatever wraps it; a lock outcome is not. The routing itself needs a cluster: the integration
 * tests.
 */
class PartitionRouterTest {
    private static final long BUDGET = PartitionRouter.ROUTING_BUDGET.millis();
    private static final long STATE_WAIT_MAX = PartitionRouter.STATE_WAIT_MAX.millis();

    @BeforeAll
    static void setUp() {
        NativeTestSupport.setUp(); // Elasticsearch's exceptions need its logging
    }

    @Test
    void aRefusalWithoutAHintWaitsForTheNextClusterState() {
        assertEquals(PartitionRouter.Retry.NEXT_STATE, PartitionRouter.Retry.after(0, BUDGET, 0));
        assertEquals(
                PartitionRouter.Retry.NEXT_STATE, PartitionRouter.Retry.after(0, 1, 0), "the budget is checked there");
    }

    @Test
    void aShortHintIsWaitedOutWithinTheRoutingBudget() {
        assertEquals(PartitionRouter.Retry.AFTER_HINT, PartitionRouter.Retry.after(200, BUDGET, 0));
        assertEquals(PartitionRouter.Retry.AFTER_HINT, PartitionRouter.Retry.after(STATE_WAIT_MAX, BUDGET, 0));
        assertEquals(PartitionRouter.Retry.GIVE_UP, PartitionRouter.Retry.after(200, 200, 0), "budget spent by then");
    }

    @Test
    void aRecoveryGraceIsWaitedOutOnlyWithinTheRequestsOwnWait() {
        long grace = STATE_WAIT_MAX + 1;
        assertEquals(PartitionRouter.Retry.GIVE_UP, PartitionRouter.Retry.after(grace, BUDGET, 0), "no wait: 503");
        assertEquals(PartitionRouter.Retry.AFTER_HINT, PartitionRouter.Retry.after(grace, 0, grace + 1));
        assertEquals(
                PartitionRouter.Retry.GIVE_UP,
                PartitionRouter.Retry.after(5_000, BUDGET, 5_000),
                "the grace ends with the wait: not within it, though within the budget");
    }

    @Test
    void anUnreachableOwnerIsRoutedAgainWhateverWrapsTheCause() {
        DiscoveryNode node = WireTesting.node(new Random(7));
        for (Exception cause : new Exception[] {
            new ConnectTransportException(node, "connect refused"),
            new NodeClosedException(node),
            new NodeDisconnectedException(node, "internal:x"),
            new NodeNotConnectedException(node, "not connected")
        }) {
            assertTrue(PartitionRouter.ownerUnreachable(cause), cause.toString());
            assertTrue(
                    PartitionRouter.ownerUnreachable(new RemoteTransportException("wrapped", cause)),
                    "wrapped: " + cause);
        }
        assertFalse(PartitionRouter.ownerUnreachable(new LockConflictException("lock [k] is held", "k", List.of("w"))));
        assertFalse(PartitionRouter.ownerUnreachable(new IllegalStateException("no")));
    }
}
