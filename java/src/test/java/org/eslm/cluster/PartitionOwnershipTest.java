package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import org.eslm.settings.LockSettings;
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

    /** docs/ARCHITECTURE.md "Silent owners": with copy leases, the copies' acknowledgements alone decide. */
    @Test
    void withCopyLeasesAPartitionServesWithinTheLeaseOfItsLastBatchOnEveryCopy() {
        PartitionOwnership ownership = new PartitionOwnership();
        ownership.copyLeases(true);
        ownership.opened(0, 7);
        assertFalse(ownership.confirmed(0), "no lease before its first batch is on every copy");
        ownership.confirm(0, System.nanoTime());
        assertFalse(ownership.confirmed(0), "the master's yes does not stand in for the copies");
        ownership.renewedByCopies(0, 6, System.nanoTime());
        assertFalse(ownership.confirmed(0), "a batch of another epoch renews nothing");
        ownership.renewedByCopies(0, 7, System.nanoTime() - LockSettings.COPY_LEASE.nanos() - 1);
        assertFalse(ownership.confirmed(0), "a batch sent longer ago than the lease");
        ownership.renewedByCopies(0, 7, System.nanoTime());
        assertTrue(ownership.confirmed(0));
        ownership.copyLeases(false);
        assertTrue(ownership.confirmed(0), "in a cluster being upgraded the master's yes counts");
        assertTrue(ownership.closed(0));
        ownership.copyLeases(true);
        ownership.opened(0, 8);
        assertFalse(ownership.confirmed(0), "reopened: the lease of the earlier opening is gone");

        ownership.renewedByCopies(1, 3, System.nanoTime());
        ownership.opened(1, 3);
        assertTrue(ownership.confirmed(1), "the first batch may be answered before the opening is recorded");
    }
}
