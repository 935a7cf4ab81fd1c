package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ListedLocks} over real answers of the core: each listed lock keeps every field the core
 * wrote, in its order, plus its node, and the page's cursor is read.
 */
class ListedLocksTest {
    @BeforeAll
    static void loadLibrary() {
        NativeTestSupport.setUp();
    }

    @Test
    void listedLocksKeepTheCoresFieldsAndGainTheirNode() {
        try (NativeLockCore core = NativeLockCore.create("{}")) {
            core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"b\",\"owner\":\"o\\\"1\",\"lease_ms\":60000}");
            core.call(
                    NativeOp.ACQUIRE, 0, "{\"key\":\"/a/x\",\"scope\":\"tree\",\"owner\":\"o2\",\"mode\":\"shared\"}");
            String answer = core.call(NativeOp.LIST, NativeLockCore.ALL_PARTITIONS, "{\"size\":1}");

            ListedLocks.Answer parsed = ListedLocks.parse(answer, "node-\u00e9");

            @SuppressWarnings("unchecked")
            Map<String, Object> page =
                    ((List<Map<String, Object>>) BridgeJson.parse(answer).get("result")).get(0);
            @SuppressWarnings("unchecked")
            Map<String, Object> coreLock = ((List<Map<String, Object>>) page.get("locks")).get(0);
            ListedLocks.Page listed = parsed.pages().get(0);
            assertEquals(0, listed.partition());
            assertEquals(1, listed.locks().size());
            ListedLocks.Lock lock = listed.locks().get(0);
            Map<String, Object> expected = new LinkedHashMap<>(coreLock);
            expected.put("node", "node-\u00e9");
            assertEquals(expected, lock.asMap());
            assertEquals(
                    List.copyOf(expected.keySet()), List.copyOf(lock.asMap().keySet()), "field order kept");
            assertEquals(
                    List.of(coreLock.get("key"), coreLock.get("scope"), coreLock.get("owner")),
                    List.of(lock.key(), lock.scope(), lock.owner()));
            assertEquals(ListedLocks.Cursor.at(lock), listed.next(), "a full page of one ends at its lock");
            assertEquals(List.of(), parsed.envelope().get("events"));
        }
    }

    @Test
    void theLastPageHasNoNext() {
        try (NativeLockCore core = NativeLockCore.create("{}")) {
            core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"k\",\"owner\":\"o\"}");
            String answer = core.call(NativeOp.LIST, NativeLockCore.ALL_PARTITIONS, "{\"size\":10}");
            ListedLocks.Page page = ListedLocks.parse(answer, "n").pages().get(0);
            assertEquals(1, page.locks().size());
            assertNull(page.next());
        }
    }
}
