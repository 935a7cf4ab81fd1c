package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The previous owner's side of a hand-over ({@link PartitionHandover#handOver}): it closes and
 * answers its state when asked, unless its own cluster state still names it the owner, when the
 * request is late (a nemesis run saw one close a freshly promoted owner) and it keeps serving.
 * The request's other paths (asking, retrying, timeouts) need a cluster: the integration tests.
 */
class PartitionHandoverTest {
    private final PartitionOwnership ownership = new PartitionOwnership();
    private final List<Integer> closed = new ArrayList<>();
    private final AtomicBoolean ownerHere = new AtomicBoolean();
    private final PartitionHandover handover = new PartitionHandover(
            null,
            null,
            null,
            ownership,
            p -> {
                closed.add(p);
                ownership.closed(p);
                return Map.of("epoch", ownership.epochs().getOrDefault(p, 7L));
            },
            p -> false,
            p -> ownerHere.get());

    @Test
    void aPartitionTheClusterStateMovedAwayIsClosedAndItsStateAnswered() {
        ownership.opened(0, 7);
        String state = handover.handOver(0);
        assertEquals(List.of(0), closed);
        assertEquals(Map.of(), ownership.epochs(), "it serves no more");
        assertTrue(state.contains("\"epoch\":7"), state);
    }

    @Test
    void aLateRequestLeavesTheOwnerOfTheClusterStateServing() {
        ownership.opened(0, 20);
        ownerHere.set(true);
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> handover.handOver(0));
        assertTrue(
                refused.getMessage().contains("lock partition [0] is this node's in epoch [20]"), refused.getMessage());
        assertEquals(List.of(), closed, "nothing closed");
        assertEquals(Map.of(0, 20L), ownership.epochs(), "it still serves");
    }

    @Test
    void aNodeThatServesNothingAnswersWhatItKept() {
        ownerHere.set(true); // a state still naming it, not yet applied as closed: nothing to close
        assertNull(handover.handOver(0), "nothing kept, nothing served");
        assertEquals(List.of(), closed);
    }
}
