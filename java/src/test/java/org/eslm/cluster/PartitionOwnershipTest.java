package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The bookkeeping the lock service consults before a request reaches the core. */
class PartitionOwnershipTest {
    @Test
    void anOpenedPartitionIsServedAndConfirmedUntilClosed() {
        PartitionOwnership ownership = new PartitionOwnership();
        assertFalse(ownership.serves(0));
        assertFalse(ownership.confirmed(0));

        ownership.opened(0, 3);
        assertTrue(ownership.serves(0));
        assertTrue(ownership.confirmed(0), "opened from the state the master just published");
        assertEquals(Map.of(0, 3L), ownership.epochs());
        assertEquals(Set.of(0), ownership.served());

        assertTrue(ownership.closed(0));
        assertFalse(ownership.closed(0), "closing twice reports the second as not served");
        assertFalse(ownership.serves(0));
        assertFalse(ownership.confirmed(0));
    }

    @Test
    void aConfirmationOlderThanTheWindowStopsGranting() {
        PartitionOwnership ownership = new PartitionOwnership();
        ownership.opened(1, 1);
        // the master's answer only ever moves the confirmation forward
        long stale = System.nanoTime() - PartitionOwnership.OWNERSHIP_WINDOW.nanos() - 1;
        ownership.confirm(1, stale);
        assertTrue(ownership.confirmed(1), "a stale answer does not undo a fresher confirmation");

        PartitionOwnership other = new PartitionOwnership();
        other.confirm(5, stale);
        assertFalse(other.confirmed(5), "an answer to a question asked longer ago than the window is no confirmation");
        other.confirm(5, System.nanoTime());
        assertTrue(other.confirmed(5));
    }

    @Test
    void aPartitionReopenedFromThisNodesOwnStateServesOnlyOnceTheMasterConfirmsIt() {
        PartitionOwnership ownership = new PartitionOwnership();
        long asked = System.nanoTime();
        ownership.openedUnconfirmed(2, 5);
        assertTrue(ownership.serves(2));
        assertFalse(ownership.confirmed(2), "its own cluster state may be stale");
        ownership.confirm(2, asked);
        assertTrue(ownership.confirmed(2));
    }
}
