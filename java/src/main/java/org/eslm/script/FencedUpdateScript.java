package org.eslm.script;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.elasticsearch.script.UpdateCtxMap;
import org.elasticsearch.script.UpdateScript;
import org.eslm.bridge.BridgeField;
import org.eslm.core.BridgeJson;

/**
 * One fenced change, run by Elasticsearch's update on the document's primary: the document as the
 * primary holds it and the script's params go to the core ({@code lock_core::fence}), which
 * answers the source to write, or nothing to write (the change is stale, or changes nothing), and
 * the update is then a {@code noop}. A client tells a stale change from an unchanged one by the
 * fence the update answers with ({@code "_source": {"includes": ["eslm_fence"]}}, docs/API.md
 * "Fenced changes"). A missing document (a scripted upsert, op {@code create}) counts as never
 * fenced; the upsert document itself is not read.
 */
final class FencedUpdateScript extends UpdateScript {
    private static final String SOURCE = "_source";
    private static final String CREATE = "create";
    private static final String NOOP = "noop";

    private final Function<String, Map<String, Object>> core;

    FencedUpdateScript(Map<String, Object> params, UpdateCtxMap ctx, Function<String, Map<String, Object>> core) {
        super(params, ctx);
        this.core = core;
    }

    @Override
    public void execute() {
        Map<String, Object> ctx = getCtx();
        Map<String, Object> args = new LinkedHashMap<>();
        args.put(BridgeField.SOURCE.key(), CREATE.equals(metadata().getOp()) ? null : ctx.get(SOURCE));
        args.put(BridgeField.PARAMS.key(), getParams());
        Map<String, Object> answer = core.apply(BridgeJson.toJson(args));
        Object write = BridgeField.WRITE.in(answer);
        if (write != null) {
            ctx.put(SOURCE, BridgeJson.object(write));
        } else {
            metadata().setOp(NOOP);
        }
    }
}
