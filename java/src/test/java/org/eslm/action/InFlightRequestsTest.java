package org.eslm.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A request sent to a partition's owner is re-routed exactly once when the partition gets a new
 * epoch, including when that epoch arrived between reading the owner and registering the request
 * (docs/ARCHITECTURE.md "Silent owners": a frozen owner stays in the cluster and never answers).
 */
class InFlightRequestsTest {
    private final InFlightRequests inFlight = new InFlightRequests();
    private final AtomicInteger rerouted = new AtomicInteger();

    @Test
    void aPromotionReroutesOnceAndAnAnswerAfterwardsChangesNothing() {
        InFlightRequests.Sent s = inFlight.add(0, 4, rerouted::incrementAndGet);
        assertFalse(inFlight.rerouteIfMoved(s, p -> 4), "same epoch: the owner answers");
        inFlight.rerouteMoved(p -> p == 0 ? 4 : 9);
        assertEquals(0, rerouted.get(), "another partition's promotion is not this request's");
        inFlight.rerouteMoved(p -> 5);
        inFlight.rerouteMoved(p -> 6);
        assertEquals(1, rerouted.get());
        inFlight.remove(s);
        assertEquals(0, inFlight.size());
    }

    @Test
    void anEpochThatChangedBeforeTheRequestWasAddedIsSeenByTheLookAfterAdding() {
        // The listener ran for epoch 5 while this request still thought epoch 4: no later state comes.
        inFlight.rerouteMoved(p -> 5);
        InFlightRequests.Sent s = inFlight.add(0, 4, rerouted::incrementAndGet);
        assertTrue(inFlight.rerouteIfMoved(s, p -> 5));
        inFlight.rerouteMoved(p -> 6);
        assertEquals(1, rerouted.get(), "re-routed once, never twice");
        assertEquals(0, inFlight.size());
    }

    @Test
    void aRequestSentToACopyBeingPromotedStaysWhileTheAppliedStateIsOlder() {
        // The master sent it in epoch 5 to the copy it promotes; its own applied state still says 4.
        InFlightRequests.Sent s = inFlight.add(0, 5, rerouted::incrementAndGet);
        assertFalse(inFlight.rerouteIfMoved(s, p -> 4));
        inFlight.rerouteMoved(p -> 5);
        assertEquals(0, rerouted.get());
        inFlight.rerouteMoved(p -> 6);
        assertEquals(1, rerouted.get());
    }

    @Test
    void aDeletedLockIndexReroutesEverything() {
        inFlight.add(0, 4, rerouted::incrementAndGet);
        inFlight.add(1, 2, rerouted::incrementAndGet);
        inFlight.rerouteMoved(p -> InFlightRequests.GONE);
        assertEquals(2, rerouted.get());
    }
}
