package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.core.CoreClient;
import org.eslm.service.OwnershipProtocol;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The previous owner's side of a hand-over ({@link PartitionHandover#handOver}) over a real core,
 * which decides whether to give: it closes and answers its state when asked by an owner of the
 * same or a newer epoch, or by an older plugin that names no epoch; it refuses an asker of an
 * older epoch than it has served in, closing and giving nothing, also once it closed the
 * partition and only keeps its state. Asking, retrying and timeouts need a cluster: the
 * integration tests.
 */
class PartitionHandoverTest {
    private static final long SERVED_IN = 20;

    private final PartitionOwnership ownership = new PartitionOwnership();
    private final List<Integer> closed = new ArrayList<>();
    private NativeLockCore core;
    private PartitionHandover handover;

    @BeforeEach
    void openInEpoch20() {
        NativeTestSupport.setUp();
        core = NativeLockCore.create("{\"partitions\":[],\"leases\":true}"); // as LockManagerPlugin.newCore
        Map<String, Object> open = new LinkedHashMap<>();
        BridgeField.EPOCH.put(open, SERVED_IN);
        BridgeField.REPLICATED.put(open, true);
        BridgeField.CONFIRMED.put(open, true);
        core.call(NativeOp.OPEN_PARTITION, 0, BridgeJson.toJson(open));
        ownership.opened(0, SERVED_IN);
        handover = new PartitionHandover(
                null,
                null,
                null,
                ownership,
                new OwnershipProtocol(new CoreClient(core)),
                p -> {
                    closed.add(p);
                    ownership.closed(p);
                    return Map.of("epoch", SERVED_IN);
                },
                p -> false);
    }

    @AfterEach
    void closeCore() {
        core.close();
    }

    @Test
    void anAskerOfTheSameOrANewerEpochGetsTheStateAndThePartitionCloses() {
        for (long asker : new long[] {SERVED_IN, SERVED_IN + 1}) {
            ownership.opened(0, SERVED_IN);
            String state = handover.handOver(0, OptionalLong.of(asker));
            assertTrue(state.contains("\"epoch\":20"), state);
            assertEquals(Map.of(), ownership.epochs(), "it serves no more");
        }
        assertEquals(List.of(0, 0), closed);
    }

    @Test
    void anOlderPluginsRequestNamesNoEpochAndIsGivenAsBefore() {
        String state = handover.handOver(0, OptionalLong.empty());
        assertTrue(state.contains("\"epoch\":20"), state);
        assertEquals(List.of(0), closed);
    }

    @Test
    void anAskerOfAnOlderEpochIsRefusedAndThePartitionStillServes() {
        IllegalStateException refused =
                assertThrows(IllegalStateException.class, () -> handover.handOver(0, OptionalLong.of(SERVED_IN - 1)));
        assertTrue(
                refused.getMessage().contains("served in epoch [20], newer than the asker's [19]"),
                refused.getMessage());
        assertEquals(List.of(), closed, "nothing closed");
        assertEquals(Map.of(0, SERVED_IN), ownership.epochs(), "it still serves");
    }

    @Test
    void aKeptStateIsRefusedToAnOlderAskerAndGivenToANewerOne() {
        core.call(NativeOp.CLOSE_PARTITION, 0, BridgeJson.toJson(BridgeField.EXPORT.of(false)));
        ownership.closed(0);
        Map<String, Object> kept = Map.of("epoch", SERVED_IN);
        handover.keepAgain(0, kept);
        assertThrows(IllegalStateException.class, () -> handover.handOver(0, OptionalLong.of(SERVED_IN - 1)));
        assertEquals(kept, handover.takeKept(0), "still kept for the owner that will ask");
        handover.keepAgain(0, kept);
        assertTrue(handover.handOver(0, OptionalLong.of(SERVED_IN + 1)).contains("\"epoch\":20"));
        assertEquals(null, handover.takeKept(0), "given once");
        assertEquals(List.of(), closed, "nothing was open to close");
    }
}
