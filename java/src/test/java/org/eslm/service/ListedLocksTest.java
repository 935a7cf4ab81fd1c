package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ListedLocks} over real answers of the core: each listed lock keeps every field the core
 * wrote, in its order, with the node the core was given, and the page's cursor is read.
 */
class ListedLocksTest {
    @BeforeAll
    static void loadLibrary() {
        NativeTestSupport.setUp();
    }

    private static NativeLockCore coreWithThreeLocks() {
        NativeLockCore core = NativeLockCore.create("{\"node_name\":\"node-\u00e9\"}");
        core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"b\",\"owner\":\"o\\\"1\",\"lease_ms\":60000}");
        core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"/a/x\",\"scope\":\"tree\",\"owner\":\"o2\",\"mode\":\"shared\"}");
        core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"\u00e9\u00e9\",\"owner\":\"o3\"}");
        return core;
    }

    @Test
    void listedLocksKeepTheCoresFieldsAndTheirNode() {
        try (NativeLockCore core = coreWithThreeLocks()) {
            String answer = core.call(NativeOp.LIST, NativeLockCore.ALL_PARTITIONS, "{\"size\":10}");

            ListedLocks.Answer parsed = ListedLocks.parse(answer);

            @SuppressWarnings("unchecked")
            Map<String, Object> page =
                    ((List<Map<String, Object>>) BridgeJson.parse(answer).get("result")).get(0);
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> coreLocks = (List<Map<String, Object>>) page.get("locks");
            ListedLocks.Page listed = parsed.pages().get(0);
            assertEquals(0, listed.partition());
            assertEquals(3, listed.locks().size());
            for (int i = 0; i < 3; i++) {
                ListedLocks.Lock lock = listed.locks().get(i);
                Map<String, Object> expected = new LinkedHashMap<>(coreLocks.get(i));
                assertEquals("node-\u00e9", expected.get("node"), "the core's node name");
                assertEquals(expected, lock.asMap());
                assertEquals(
                        List.copyOf(expected.keySet()), List.copyOf(lock.asMap().keySet()), "field order kept");
                assertEquals(
                        List.of(expected.get("key"), expected.get("scope"), expected.get("owner")),
                        List.of(lock.key(), lock.scope(), lock.owner()));
            }
            assertNull(listed.next(), "the last page has no next");
            assertEquals(List.of(), parsed.envelope().get("events"));
        }
    }

    @Test
    void aFullPageEndsAtItsLastLock() {
        try (NativeLockCore core = coreWithThreeLocks()) {
            String answer = core.call(NativeOp.LIST, NativeLockCore.ALL_PARTITIONS, "{\"size\":2}");
            ListedLocks.Page page = ListedLocks.parse(answer).pages().get(0);
            assertEquals(2, page.locks().size());
            assertEquals(ListedLocks.Cursor.at(page.locks().get(1)), page.next());
        }
    }
}
