package org.eslm.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.elasticsearch.script.IngestScript;
import org.elasticsearch.script.UpdateCtxMap;
import org.elasticsearch.script.UpdateScript;
import org.elasticsearch.script.UpsertCtxMap;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The wiring of the {@code eslm} script language over a real core: the update script hands the
 * primary's document and the params to the core and writes back what it answers, or makes the
 * update a noop. What a fenced change does to a document is the core's, tested there
 * (rust/lock-core {@code fence.rs}).
 */
class FenceScriptEngineTest {
    private static FenceScriptEngine engine;

    @BeforeAll
    static void setUp() {
        NativeTestSupport.setUp();
        NativeLockCore core = NativeLockCore.create(BridgeJson.toJson(Map.of("config", Map.of())));
        engine = new FenceScriptEngine(args -> BridgeJson.object(BridgeField.RESULT.in(
                BridgeJson.parse(core.call(NativeOp.FENCE, NativeLockCore.ALL_PARTITIONS, args)))));
    }

    private static UpdateScript.Factory fence() {
        return engine.compile("t", "fence", UpdateScript.CONTEXT, Map.of());
    }

    private static UpdateCtxMap existing(Map<String, Object> source) {
        return new UpdateCtxMap("idx", "1", 3, null, "_doc", "index", 0, new HashMap<>(source));
    }

    @Test
    void aChangeWithANewerTokenIsWrittenAndAnOlderOneIsANoop() {
        UpdateCtxMap ctx = existing(Map.of("n", 1, "eslm_fence", Map.of("token", 7, "key", "k")));
        fence().newInstance(Map.of("token", 8, "key", "k", "doc", Map.of("n", 2)), ctx)
                .execute();
        assertEquals("index", ctx.getMetadata().getOp());
        assertEquals(2, ((Number) ctx.getSource().get("n")).intValue());
        assertEquals(8, ((Number) ((Map<?, ?>) ctx.getSource().get("eslm_fence")).get("token")).intValue());

        UpdateCtxMap stale = existing(Map.of("n", 1, "eslm_fence", Map.of("token", 7, "key", "k")));
        fence().newInstance(Map.of("token", 6, "key", "k", "doc", Map.of("n", 5)), stale)
                .execute();
        assertEquals("noop", stale.getMetadata().getOp());
        assertEquals(1, ((Number) stale.getSource().get("n")).intValue());
    }

    @Test
    void aMissingDocumentCountsAsNeverFencedAndItsUpsertIsNotRead() {
        UpsertCtxMap ctx = new UpsertCtxMap("idx", "1", "create", 0, new HashMap<>(Map.of("ignored", true)));
        fence().newInstance(Map.of("token", 2, "key", "k", "doc", Map.of("n", 1)), ctx)
                .execute();
        assertEquals("create", ctx.getMetadata().getOp());
        assertEquals(Map.of("n", 1, "eslm_fence", Map.of("token", 2, "key", "k")), ctx.getSource());
    }

    @Test
    void badParamsFailTheUpdateNamingTheField() {
        UpdateCtxMap ctx = existing(Map.of("n", 1));
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> fence().newInstance(Map.of("key", "k"), ctx)
                        .execute());
        assertTrue(e.getMessage().contains("[token] is required"), e.getMessage());
    }

    @Test
    void theLanguageHasOneScriptForUpdatesOnly() {
        IllegalArgumentException other = assertThrows(
                IllegalArgumentException.class,
                () -> engine.compile("t", "ctx.op = 'delete'", UpdateScript.CONTEXT, Map.of()));
        assertTrue(other.getMessage().contains("has one script, [fence]"), other.getMessage());
        IllegalArgumentException context = assertThrows(
                IllegalArgumentException.class, () -> engine.compile("t", "fence", IngestScript.CONTEXT, Map.of()));
        assertTrue(context.getMessage().contains("serves updates only"), context.getMessage());
        assertEquals("eslm", engine.getType());
    }
}
