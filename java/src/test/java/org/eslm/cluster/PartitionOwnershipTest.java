package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The bookkeeping the lock service consults before a request reaches the core: which partitions
 * this node serves, in which epochs. Whether a lease is current is the core's (rust/lock-core
 * {@code src/ownership/}, its tests and model).
 */
class PartitionOwnershipTest {
    @Test
    void anOpenedPartitionIsServedUntilClosed() {
        PartitionOwnership ownership = new PartitionOwnership();
        assertFalse(ownership.serves(0));

        ownership.opened(0, 3);
        assertTrue(ownership.serves(0));
        assertEquals(Map.of(0, 3L), ownership.epochs());
        assertEquals(Set.of(0), ownership.served());

        assertTrue(ownership.closed(0));
        assertFalse(ownership.closed(0), "closing twice reports the second as not served");
        assertFalse(ownership.serves(0));
    }

    @Test
    void copyLeasesFollowTheClusterState() {
        PartitionOwnership ownership = new PartitionOwnership();
        assertFalse(ownership.copyLeases());
        ownership.copyLeases(true);
        assertTrue(ownership.copyLeases());
    }
}
