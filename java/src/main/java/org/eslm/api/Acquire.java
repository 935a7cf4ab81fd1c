package org.eslm.api;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.elasticsearch.core.TimeValue;

/**
 * What {@link PluginLocks#acquire} asks for: the fields of {@code POST /_locks/{key}/_acquire}
 * (docs/API.md), with the same defaults and bounds, because it is parsed by the same code.
 *
 * <pre>{@code
 * Acquire.owner("reindexer-" + nodeName).waitFor(TimeValue.timeValueSeconds(5)).priority(Acquire.BACKGROUND)
 * }</pre>
 */
public final class Acquire {
    /** Priority {@code background} (docs/API.md: 0..9, foreground 7 by default). */
    public static final String BACKGROUND = "background";
    /** Priority {@code foreground}, the default. */
    public static final String FOREGROUND = "foreground";

    private final Map<String, Object> body = new LinkedHashMap<>();

    private Acquire(String owner) {
        body.put("owner", Objects.requireNonNull(owner, "owner"));
    }

    /** An exclusive try-lock for {@code owner} with the node's default lease; refine with the methods below. */
    public static Acquire owner(String owner) {
        return new Acquire(owner);
    }

    /** How long to queue for the lock (default {@code locks.wait.default}, a try-lock). */
    public Acquire waitFor(TimeValue wait) {
        return put("wait", wait.getStringRep());
    }

    /** The grant's lease (default {@code locks.lease.default}). */
    public Acquire lease(TimeValue lease) {
        return put("lease", lease.getStringRep());
    }

    /** Queue priority, 0..9; higher is served first. */
    public Acquire priority(int priority) {
        return put("priority", priority);
    }

    /** Queue priority by name: {@link #BACKGROUND} or {@link #FOREGROUND}. */
    public Acquire priority(String priority) {
        return put("priority", priority);
    }

    /** A shared (read) lock instead of an exclusive one. */
    public Acquire shared() {
        return put("mode", "shared");
    }

    /** A tree lock: the key is an absolute path, locked with its ancestors' intention locks. */
    public Acquire tree() {
        return put("scope", "tree");
    }

    /** Acquire under a session of the same owner (its lease applies). */
    public Acquire session(String session) {
        return put("session", session);
    }

    private Acquire put(String field, Object value) {
        body.put(field, Objects.requireNonNull(value, field));
        return this;
    }

    /** The JSON body this stands for. */
    Map<String, Object> body() {
        return body;
    }
}
