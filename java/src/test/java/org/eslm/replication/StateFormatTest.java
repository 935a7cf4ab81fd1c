package org.eslm.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.eslm.NativeTestSupport;
import org.eslm.WireTesting;
import org.eslm.bridge.NativeFormat;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.PeerFormats;
import org.eslm.core.BridgeJson;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state log through the format versions (docs/ARCHITECTURE.md "Formats and versions"): the
 * log a node of format 1 wrote (the fixture {@code format1/}, made by the plugin at commit
 * d1df89a, see its README) is read by this build with every holder and token, exactly as that
 * node listed them; a log of this build's format round-trips; a newer format is refused with both
 * numbers named, as a restart refuses a damaged log.
 */
class StateFormatTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void loadLibrary() {
        NativeTestSupport.setUp();
    }

    private static Path fixture(String name) throws URISyntaxException {
        return Path.of(StateFormatTest.class.getResource("format1/" + name).toURI());
    }

    /** What a restart does with a log (LockShardListener.restore, PartitionManager's promotion): its records applied in order to a standby, then the partition opened from it in the next epoch. */
    private static void restore(NativeLockCore core, List<String> records, long epoch) {
        for (String record : records) {
            String applied = core.call(NativeOp.STANDBY_APPLY, 0, record);
            assertTrue(applied.contains("\"applied\":true"), applied);
        }
        core.call(NativeOp.OPEN_PARTITION, 0, "{\"epoch\":" + epoch + ",\"from_standby\":true,\"replicated\":true}");
    }

    /** The held locks as the core lists them, each cut to what the fixture's node listed. */
    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> held(NativeLockCore core) {
        Map<String, Object> envelope = BridgeJson.parse(core.call(NativeOp.LIST, 0, "{\"size\":1000}"));
        List<Map<String, Object>> pages = (List<Map<String, Object>>) envelope.get("result");
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> lock : (List<Map<String, Object>>) pages.get(0).get("locks")) {
            Map<String, Object> cut = new LinkedHashMap<>();
            for (String k : List.of("key", "scope", "owner", "mode", "fencing_token", "session")) {
                cut.put(k, lock.get(k));
            }
            out.add(cut);
        }
        return out;
    }

    @Test
    @SuppressWarnings("unchecked")
    void theStateLogOfFormat1IsReadWithEveryHolderAndToken() throws Exception {
        StateLogFile.Contents contents = StateLogFile.read(fixture("locks-batches.log"));
        assertFalse(contents.legacy());
        assertEquals(0, contents.tornBytes());
        assertTrue(contents.records().size() > 10, "" + contents.records().size());
        assertTrue(contents.records().stream().noneMatch(r -> r.contains("\"format\"")), "format 1: no member");
        Map<String, Object> expected = BridgeJson.parse(Files.readString(fixture("expected.json")));
        try (NativeLockCore core = NativeLockCore.create("{\"partitions\":[]}")) {
            restore(core, contents.records(), 2);
            List<Map<String, Object>> locks = held(core);
            assertEquals(expected.get("locks"), locks);
            assertEquals(
                    9,
                    locks.size(),
                    "two exclusive, a shared pair, a tree, two semaphore grants, an election, a session's");
            Map<String, Object> session = ((List<Map<String, Object>>) expected.get("sessions")).get(0);
            String kept = core.call(
                    NativeOp.SESSION_KEEPALIVE,
                    0,
                    BridgeJson.toJson(Map.of("session", session.get("session"), "owner", session.get("owner"))));
            assertTrue(kept.contains("\"ttl_ms\":240000"), "the session came back: " + kept);
            // The token counter came back too: the next grant's token is above every restored one.
            String granted = core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"next\",\"owner\":\"n\"}");
            long token = ((Number)
                            ((Map<?, ?>) ((Map<?, ?>) BridgeJson.parse(granted).get("result")).get("granted"))
                                    .get("fencing_token"))
                    .longValue();
            for (Map<String, Object> lock : locks) {
                assertTrue(token > ((Number) lock.get("fencing_token")).longValue(), granted);
            }
        }
    }

    @Test
    void aLogOfThisBuildsFormatRoundTrips() throws IOException {
        Path file = dir.resolve(ShardStateLog.FILE_NAME);
        List<Map<String, Object>> before;
        try (NativeLockCore core = NativeLockCore.create("{\"partitions\":[]}")) {
            core.call(NativeOp.OPEN_PARTITION, 0, "{\"epoch\":4,\"replicated\":true}");
            core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"a\",\"owner\":\"w\",\"lease_ms\":60000}");
            core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"b\",\"owner\":\"v\",\"mode\":\"shared\",\"lease_ms\":60000}");
            String full = result(core.call(NativeOp.EXPORT_FULL, 0, "{}"));
            assertTrue(full.contains("\"format\":" + NativeFormat.STATE_FORMAT), full);
            StateLogFile.replace(file, "{\"full\":" + full + "}");
            before = held(core);
        }
        StateLogFile.Contents contents = StateLogFile.read(file);
        try (NativeLockCore core = NativeLockCore.create("{\"partitions\":[]}")) {
            restore(core, contents.records(), 5);
            List<Map<String, Object>> after = held(core);
            assertEquals(before.size(), after.size());
            for (int i = 0; i < before.size(); i++) {
                assertEquals(before.get(i).get("fencing_token"), after.get(i).get("fencing_token"));
                assertEquals(before.get(i).get("owner"), after.get(i).get("owner"));
            }
        }
    }

    @Test
    void aNewerFormatIsRefusedNamingBothNumbers() throws Exception {
        String newer = String.valueOf(NativeFormat.STATE_FORMAT + 1);
        List<String> records =
                new ArrayList<>(StateLogFile.read(fixture("locks-batches.log")).records());
        String last = records.remove(records.size() - 1);
        records.add(last.replace("{\"delta\":{", "{\"delta\":{\"format\":" + newer + ","));
        try (NativeLockCore core = NativeLockCore.create("{\"partitions\":[]}")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> restore(core, records, 2));
            assertTrue(StateFormats.refused(e), e.getMessage());
            assertTrue(e.getMessage().contains("[" + newer + "]"), e.getMessage());
            assertTrue(e.getMessage().contains("[" + NativeFormat.STATE_FORMAT + "]"), e.getMessage());
            assertFalse(StateFormats.refused(new IllegalArgumentException("[seq] does not follow")));
        }
    }

    private static String result(String envelope) {
        return BridgeJson.valueToJson(BridgeJson.parse(envelope).get("result"));
    }

    @Test
    void thisBuildAnnouncesItsFormatAndWritesTheOldestItsPeersRead() {
        assertEquals(
                String.valueOf(NativeFormat.STATE_FORMAT),
                PeerFormats.nodeSettings().get("node.attr." + PeerFormats.ATTRIBUTE));
        assertEquals(1, PeerFormats.of(Map.of()), "a node of the plugin before formats");
        assertEquals(1, PeerFormats.of(Map.of(PeerFormats.ATTRIBUTE, "x")));
        assertEquals(7, PeerFormats.of(Map.of(PeerFormats.ATTRIBUTE, "7")));
        Random r = new Random(3);
        DiscoveryNode current = WireTesting.node(r, Map.of(PeerFormats.ATTRIBUTE, "" + NativeFormat.STATE_FORMAT));
        DiscoveryNode newer = WireTesting.node(r, Map.of(PeerFormats.ATTRIBUTE, "" + (NativeFormat.STATE_FORMAT + 1)));
        DiscoveryNode old = WireTesting.node(r, Map.of());
        assertEquals(
                NativeFormat.STATE_FORMAT, PeerFormats.oldest(List.of(current, newer)), "never above this build's");
        assertEquals(
                1,
                PeerFormats.oldest(List.of(current, old, newer)),
                "a rolling upgrade: format 1 while an old node is in");
    }
}
