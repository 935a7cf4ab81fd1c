package org.eslm.script;

import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.elasticsearch.script.ScriptContext;
import org.elasticsearch.script.ScriptEngine;
import org.elasticsearch.script.UpdateScript;

/**
 * The script language {@code eslm}, registered on every node with the plugin: one update script,
 * {@code fence}, that applies a change to a document only when the request's fencing token is at
 * least the highest token that changed it (docs/API.md "Fenced changes"). A script engine of the
 * plugin's own rather than Painless, so that the check is the core's ({@code lock_core::fence})
 * and works where Painless is not allowed. Use it in {@code _update} or a bulk {@code update}:
 * {@code {"script": {"lang": "eslm", "source": "fence", "params": {"token", "key", ...}},
 * "scripted_upsert": true, "upsert": {}}}.
 */
public final class FenceScriptEngine implements ScriptEngine {
    /** The language's name, the script's {@code lang}. */
    public static final String LANG = "eslm";
    /** The one script of the language, the script's {@code source}. */
    public static final String FENCE = "fence";

    private final Function<String, Map<String, Object>> core;

    /** {@code core}: the node's core for one {@code FENCE} call, there once the plugin's components exist. */
    public FenceScriptEngine(Function<String, Map<String, Object>> core) {
        this.core = core;
    }

    @Override
    public String getType() {
        return LANG;
    }

    @Override
    public <T> T compile(String name, String code, ScriptContext<T> context, Map<String, String> options) {
        if (context.equals(UpdateScript.CONTEXT) == false) {
            throw new IllegalArgumentException(
                    "the [" + LANG + "] script language serves updates only, not [" + context.name + "]");
        }
        if (FENCE.equals(code.strip()) == false) {
            throw new IllegalArgumentException("the [" + LANG + "] script language has one script, [" + FENCE
                    + "], not [" + code + "] (docs/API.md \"Fenced changes\")");
        }
        UpdateScript.Factory factory = (params, ctx) -> new FencedUpdateScript(params, ctx, core);
        return context.factoryClazz.cast(factory);
    }

    @Override
    public Set<ScriptContext<?>> getSupportedContexts() {
        return Set.of(UpdateScript.CONTEXT);
    }
}
