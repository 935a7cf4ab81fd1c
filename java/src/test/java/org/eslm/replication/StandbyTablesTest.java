package org.eslm.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeBounds;
import org.eslm.bridge.NativeFormat;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.core.CoreClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A replica's standby tables (docs/ARCHITECTURE.md "Replication") over real cores, an owner's and
 * a copy's: a copy has a standby only once it applied a whole state (a delta before one is
 * refused, so the copy asks to catch up); later deltas apply in order; the standby's whole state
 * carries every holder to another copy; a drop or a promotion forgets it. A promoted copy waits
 * out the old owner's lease, all of it when it never answered, not longer when asked again, and
 * not at all once the old owner closed.
 */
class StandbyTablesTest {
    private NativeLockCore owner;
    private NativeLockCore copy;
    private StandbyTables standbys;

    @BeforeEach
    void openOwnerAndCopy() {
        NativeTestSupport.setUp();
        // The owner without leases: no copy answers its batches here, the test hands them over.
        owner = NativeLockCore.create("{\"partitions\":[]}");
        owner.call(NativeOp.OPEN_PARTITION, 0, "{\"epoch\":3,\"replicated\":true}");
        copy = NativeLockCore.create("{\"partitions\":[],\"leases\":true}"); // as LockManagerPlugin.newCore
        standbys = new StandbyTables(new CoreClient(copy));
    }

    @AfterEach
    void closeCores() {
        owner.close();
        copy.close();
    }

    /** The owner's next batch as GroupCommit ships it: the core's text. */
    private String batch(boolean full) {
        Map<String, Object> envelope = BridgeJson.parse(owner.call(
                NativeOp.TAKE_BATCH, 0, BridgeJson.toJson(NativeFormat.batchArgs(NativeFormat.STATE_FORMAT, full))));
        return (String) BridgeField.BATCH.in((Map<?, ?>) BridgeField.RESULT.in(envelope));
    }

    private void acquire(String key) {
        String granted =
                owner.call(NativeOp.ACQUIRE, 0, "{\"key\":\"" + key + "\",\"owner\":\"w\",\"lease_ms\":60000}");
        assertTrue(granted.contains("\"granted\""), granted);
    }

    /** The owners of the locks a core serving partition 0 lists. */
    @SuppressWarnings("unchecked")
    private static Set<String> heldKeys(NativeLockCore core) {
        Map<String, Object> envelope = BridgeJson.parse(core.call(NativeOp.LIST, 0, "{\"size\":100}"));
        List<Map<String, Object>> pages = (List<Map<String, Object>>) envelope.get("result");
        return Set.copyOf(((List<Map<String, Object>>) pages.get(0).get("locks"))
                .stream().map(lock -> (String) lock.get("key")).toList());
    }

    @Test
    void aDeltaBeforeAWholeStateIsRefusedAndLaterDeltasApplyInOrder() {
        String whole = batch(true);
        acquire("a");
        String delta = batch(false);
        assertFalse(standbys.apply(0, delta), "no base yet");
        assertFalse(standbys.has(0));
        assertEquals(Set.of(), standbys.partitions());

        assertTrue(standbys.apply(0, whole));
        assertTrue(standbys.apply(0, delta));
        acquire("b");
        assertTrue(standbys.apply(0, batch(false)));
        assertTrue(standbys.has(0));
        assertEquals(Set.of(0), standbys.partitions());
    }

    @Test
    void theWholeStateOfAStandbyCarriesEveryHolderToAnotherCopy() {
        acquire("a");
        acquire("b");
        assertTrue(standbys.apply(0, batch(true)));
        acquire("c");
        assertTrue(standbys.apply(0, batch(false)));
        String whole = standbys.wholeState(0);
        try (NativeLockCore next = NativeLockCore.create("{\"partitions\":[]}")) { // serves once open, as the owner
            StandbyTables nextStandbys = new StandbyTables(new CoreClient(next));
            assertTrue(nextStandbys.apply(0, whole));
            next.call(NativeOp.OPEN_PARTITION, 0, "{\"epoch\":4,\"from_standby\":true,\"replicated\":true}");
            assertEquals(Set.of("a", "b", "c"), heldKeys(next));
        }
    }

    @Test
    void aDropOrAPromotionForgetsTheStandby() {
        assertTrue(standbys.apply(0, batch(true)));
        standbys.promoted(0);
        assertFalse(standbys.has(0));
        assertTrue(standbys.apply(0, batch(true)));
        standbys.drop(0);
        assertFalse(standbys.has(0));
        assertNull(standbys.wholeState(0), "the core dropped its table too");
    }

    @Test
    void aPromotedCopyWaitsOutTheOldLeaseOnceAndNotAtAllWhenTheOldOwnerClosed() {
        long never = standbys.promotionWaitMs(1, false);
        assertTrue(never >= NativeBounds.PROMOTION_WAIT_MS - 1, "a copy that never answered waits it all: " + never);
        assertTrue(standbys.promotionWaitMs(1, false) <= never, "asked again, the wait ends at the same moment");
        assertEquals(0, standbys.promotionWaitMs(1, true));

        standbys.acknowledged(0);
        long wait = standbys.promotionWaitMs(0, false);
        assertTrue(wait > 0 && wait <= never, "from its last answer, just now: " + wait);
    }

    @Test
    void recoveryWaitsAreListedInPartitionOrder() {
        standbys.recoveryWaited(10, 7);
        standbys.recoveryWaited(2, 3);
        assertEquals(List.of("2", "10"), List.copyOf(standbys.recoveryWaits().keySet()));
        assertEquals(7L, standbys.recoveryWaits().get("10"));
    }
}
