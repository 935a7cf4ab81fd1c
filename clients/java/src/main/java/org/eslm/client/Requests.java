package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.eslm.client.errors.LockException;
import org.eslm.client.internal.Durations;
import org.eslm.client.internal.Endpoints;
import org.eslm.client.internal.JsonExchange;
import org.eslm.client.internal.Retrier;
import org.eslm.client.internal.WaitRounds;
import org.eslm.client.internal.Wire;

/**
 * The lock manager's endpoints as asynchronous calls with their bodies (docs/API.md), each retried
 * on 503 within its budget: a queued acquire's {@code wait}, else the client's retry budget.
 */
final class Requests {
    private final JsonExchange transport;
    private final Retrier retrier;
    private final long retryBudgetMs;

    Requests(JsonExchange transport, Retrier retrier, long retryBudgetMs) {
        this.transport = transport;
        this.retrier = retrier;
        this.retryBudgetMs = retryBudgetMs;
    }

    /** The budget of a call without a wait of its own (LockClientBuilder.retryBudget). */
    long retryBudgetMs() {
        return retryBudgetMs;
    }

    /** {@code POST /_locks/{key}/_acquire}; a retry asks the server to wait what is left. */
    CompletableFuture<JsonNode> acquire(
            String owner, String acquisition, String key, AcquireOptions options, String sessionId) {
        ObjectNode body =
                withPreempt(withLockDelay(acquireBody(owner, acquisition, options, sessionId), options), options);
        body.put("mode", Wire.name(options.mode())).put("scope", Wire.name(options.scope()));
        return waiting(Endpoints.acquire(key), body, WaitRounds.millis(options.maxWait()));
    }

    /** {@code POST /_semaphores/{name}/_acquire} for {@code permits} of {@code limit}. */
    CompletableFuture<JsonNode> acquireSemaphore(
            String owner,
            String acquisition,
            String name,
            int permits,
            int limit,
            AcquireOptions options,
            String sessionId) {
        noPreempt(options, "a semaphore");
        ObjectNode body = acquireBody(owner, acquisition, options, sessionId);
        body.put("permits", permits).put("limit", limit);
        return waiting(Endpoints.semaphore(name) + "/_acquire", body, WaitRounds.millis(options.maxWait()));
    }

    /** {@code POST /_elections/{name}/_campaign} as {@code candidate}, publishing {@code value}. */
    CompletableFuture<JsonNode> campaign(
            String candidate, String acquisition, String name, String value, AcquireOptions options, String sessionId) {
        ObjectNode body = transport.object().put("candidate", candidate).put("acquisition", acquisition);
        if (value != null) {
            body.put("value", value);
        }
        if (sessionId != null) {
            body.put("session", sessionId);
        } else if (options.lease() != null) {
            body.put("lease", Durations.positiveMillis(options.lease(), "lease"));
        }
        return waiting(
                Endpoints.election(name) + "/_campaign",
                withLockDelay(body, options),
                WaitRounds.millis(options.maxWait()));
    }

    /** The options' lock-delay in an acquire body, when they name one (docs/API.md "Lock-delay"). */
    private static ObjectNode withLockDelay(ObjectNode body, AcquireOptions options) {
        if (options.lockDelay() != null) {
            body.put("lock_delay", Durations.millis(options.lockDelay(), "lock_delay"));
        }
        return body;
    }

    /** The options' preemption grace in a single lock's acquire body (docs/API.md "Preemption"). */
    private static ObjectNode withPreempt(ObjectNode body, AcquireOptions options) {
        if (options.preempt() != null) {
            body.put("preempt", Durations.positiveMillis(options.preempt(), "preempt"));
        }
        return body;
    }

    /** Refuses a preemption where the server has none. */
    private static void noPreempt(AcquireOptions options, String what) {
        if (options.preempt() != null) {
            throw new IllegalArgumentException("[preempt] " + what + " does not preempt");
        }
    }

    /** {@code GET /_elections/{name}}: the election's state. */
    CompletableFuture<JsonNode> election(String name) {
        return plain("GET", Endpoints.election(name), null);
    }

    /** {@code PUT|DELETE|GET /_groups/{name}} (docs/API.md "Groups"). */
    CompletableFuture<JsonNode> group(String method, String name) {
        return plain(method, Endpoints.group(name), null);
    }

    /** {@code GET /_groups}: every group's name. */
    CompletableFuture<JsonNode> groups() {
        return plain("GET", "/_groups", null);
    }

    /**
     * {@code POST /_groups/{name}/_<action>} as {@code member}: {@code _join} (with capabilities
     * and a lease), {@code _heartbeat} (a lease), {@code _leave}, {@code _update} (capabilities).
     */
    CompletableFuture<JsonNode> groupMember(
            String action, String name, String member, String acquisition, Object capabilities, Long leaseMs) {
        ObjectNode body = transport.object().put("member", member);
        if (acquisition != null) {
            body.put("acquisition", acquisition);
        }
        if (capabilities != null) {
            body.set("capabilities", transport.node(capabilities));
        }
        if (leaseMs != null) {
            body.put("lease", leaseMs);
        }
        return plain("POST", Endpoints.group(name) + "/_" + action, body);
    }

    /** {@code GET /_groups/{name}/_observe}: the group once its version is not {@code version}. */
    CompletableFuture<JsonNode> observeGroup(String name, long version, long waitMs) {
        return retrier.run(
                waitMs, left -> transport.send("GET", Endpoints.groupObserve(name, version, left), null, left));
    }

    /** {@code POST /_locks/_acquire}: all or nothing. */
    CompletableFuture<JsonNode> acquireAll(
            String owner, String acquisition, List<LockTarget> targets, AcquireOptions options, String sessionId) {
        noPreempt(options, "a multi-lock");
        ObjectNode body = withLockDelay(acquireBody(owner, acquisition, options, sessionId), options);
        ArrayNode locks = body.putArray("locks");
        for (LockTarget target : targets) {
            locks.addObject()
                    .put("key", target.key())
                    .put("mode", Wire.name(target.mode()))
                    .put("scope", Wire.name(target.scope()));
        }
        return waiting(Endpoints.MULTI_ACQUIRE, body, WaitRounds.millis(options.maxWait()));
    }

    /** {@code POST /_locks/{key}/_renew} of this grant only; answers the new {@code lease_ms}. */
    CompletableFuture<Long> renew(String owner, String key, LockScope scope, long token, Long leaseMs, long budgetMs) {
        ObjectNode body = grantBody(owner, scope, token);
        if (leaseMs != null) {
            body.put("lease", leaseMs);
        }
        return retrier.run(budgetMs, left -> transport.send("POST", grantPath(key, scope, "/_renew"), body, 0))
                .thenApply(answer -> answer.get("lease_ms").asLong());
    }

    /**
     * {@code GET /_locks/{key}/_watch}: answers when the lock with {@code token} ends, or after
     * {@code waitMs} unchanged; a 503 is retried within the wait.
     */
    CompletableFuture<JsonNode> watch(String key, LockScope scope, long token, long waitMs) {
        return watch(key, scope, token, waitMs, false);
    }

    /** {@link #watch(String, LockScope, long, long)}, with {@code revoke} also answering a request to yield. */
    CompletableFuture<JsonNode> watch(String key, LockScope scope, long token, long waitMs, boolean revoke) {
        return retrier.run(waitMs, left -> {
            long wait = Math.max(1, left);
            String path = watchPath(key, scope, token, wait) + (revoke ? "&revoke=true" : "");
            return transport.send("GET", path, null, wait);
        });
    }

    /**
     * A lock's {@code _watch}, or for a leadership its election's {@code _observe} of its term
     * (docs/API.md "Elections": it answers as soon as that term is not the current one).
     */
    private static String watchPath(String key, LockScope scope, long token, long waitMs) {
        return scope == LockScope.ELECTION
                ? Endpoints.observe(key, token, waitMs)
                : Endpoints.watch(key, Wire.name(scope), token, waitMs);
    }

    /**
     * {@code POST /_locks/{key}/_downgrade} of this grant to shared (docs/API.md): the lock stays
     * held, queued readers are let in, token and lease stay. Answers the grant as an acquire does.
     */
    CompletableFuture<JsonNode> downgrade(String owner, String key, LockScope scope, long token, long budgetMs) {
        ObjectNode body = grantBody(owner, scope, token).put("mode", Wire.name(LockMode.SHARED));
        return retrier.run(budgetMs, left -> transport.send("POST", grantPath(key, scope, "/_downgrade"), body, 0));
    }

    /** {@code POST /_locks/{key}/_release} of this grant only: a stale token frees nothing newer. */
    CompletableFuture<JsonNode> release(String owner, String key, LockScope scope, long token) {
        return plain("POST", grantPath(key, scope, "/_release"), grantBody(owner, scope, token));
    }

    /**
     * A renew or release body of one grant, named by its token, which is this acquisition's alone
     * (docs/API.md "Acquisitions"): a semaphore's endpoints know their scope; an election's name
     * the owner {@code candidate} and the token {@code term}.
     */
    private ObjectNode grantBody(String owner, LockScope scope, long token) {
        if (scope == LockScope.ELECTION) {
            return transport.object().put("candidate", owner).put("term", token);
        }
        ObjectNode body = ownerBody(owner).put("fencing_token", token);
        return scope == LockScope.SEMAPHORE ? body : body.put("scope", Wire.name(scope));
    }

    /**
     * {@code /_locks/{key}{action}}, {@code /_semaphores/{name}{action}} for a semaphore's grant,
     * or {@code /_elections/{name}{action}} for a leadership (whose release is {@code _resign}).
     */
    private static String grantPath(String key, LockScope scope, String action) {
        if (scope == LockScope.ELECTION) {
            return Endpoints.election(key) + (action.equals("/_release") ? "/_resign" : action);
        }
        return (scope == LockScope.SEMAPHORE ? Endpoints.semaphore(key) : Endpoints.lock(key)) + action;
    }

    /** {@code POST /_locks/_release} of the given locks. */
    CompletableFuture<JsonNode> releaseAll(String owner, Collection<HeldLock> held) {
        ObjectNode body = ownerBody(owner);
        ArrayNode locks = body.putArray("locks");
        for (HeldLock lock : held) {
            locks.addObject()
                    .put("key", lock.key())
                    .put("scope", Wire.name(lock.scope()))
                    .put("fencing_token", lock.fencingToken());
        }
        return plain("POST", Endpoints.MULTI_RELEASE, body);
    }

    /** {@code GET /_locks/{key}?scope=..}: holders and waiters. */
    CompletableFuture<JsonNode> lockInfo(String key, LockScope scope) {
        return plain("GET", Endpoints.lock(key) + "?scope=" + Wire.name(scope), null);
    }

    /** {@code POST /_locks/{key}/_force_release}: evicts every holder of {@code key} in {@code scope}. */
    CompletableFuture<JsonNode> forceRelease(String key, LockScope scope, String reason) {
        ObjectNode body = transport.object().put("scope", Wire.name(scope));
        if (reason != null) {
            body.put("reason", reason);
        }
        return plain("POST", Endpoints.lock(key) + "/_force_release", body);
    }

    /** {@code POST /_semaphores/{name}/_limit}: an administrator's change of the limit. */
    CompletableFuture<JsonNode> semaphoreLimit(String name, int limit) {
        return plain(
                "POST",
                Endpoints.semaphore(name) + "/_limit",
                transport.object().put("limit", limit));
    }

    /** {@code GET /_locks/_node/diagnostics}: the receiving node's view, settings included. */
    CompletableFuture<JsonNode> stats() {
        return plain("GET", "/_locks/_stats", null);
    }

    /** {@code GET /_health_report/lock_partitions}: the plugin's health indicator (docs/API.md "Health"). */
    CompletableFuture<JsonNode> partitionHealth() {
        return plain("GET", "/_health_report/lock_partitions", null);
    }

    CompletableFuture<JsonNode> nodeDiagnostics() {
        return plain("GET", "/_locks/_node/diagnostics", null);
    }

    /** {@code POST /_locks/_session}. */
    CompletableFuture<JsonNode> openSession(String owner, long ttlMs, String routing) {
        ObjectNode body = ownerBody(owner).put("ttl", ttlMs);
        if (routing != null) {
            body.put("routing", routing);
        }
        return plain("POST", Endpoints.SESSIONS, body);
    }

    /** {@code POST /_locks/_session/{id}/_keepalive}; answers the session's new ttl. */
    CompletableFuture<Long> keepAlive(String owner, String sessionId, long budgetMs) {
        ObjectNode body = ownerBody(owner);
        return retrier.run(budgetMs, left -> transport.send("POST", Endpoints.keepAlive(sessionId), body, 0))
                .thenApply(answer -> answer.get("expires_in_ms").asLong());
    }

    /** {@code DELETE /_locks/_session/{id}}: releases its locks. */
    CompletableFuture<JsonNode> endSession(String owner, String sessionId) {
        return plain("DELETE", Endpoints.session(sessionId), ownerBody(owner));
    }

    /**
     * An acquire body; {@code acquisition} names this acquisition (docs/API.md "Acquisitions"), the
     * same on every retry, so a retry gets the grant an unseen answer carried.
     */
    private ObjectNode acquireBody(String owner, String acquisition, AcquireOptions options, String sessionId) {
        ObjectNode body = ownerBody(owner).put("acquisition", acquisition);
        if (options.priority() != null) {
            body.put("priority", options.priority().intValue());
        }
        if (sessionId != null) {
            body.put("session", sessionId);
        } else if (options.lease() != null) {
            body.put("lease", Durations.positiveMillis(options.lease(), "lease"));
        }
        return body;
    }

    /** {@code GET /{index}/_doc/{id}}, realtime (docs/API.md "Fenced writes and optimistic updates"). */
    CompletableFuture<JsonNode> getDocument(String index, String id) {
        return plain("GET", Endpoints.document(index, id), null);
    }

    /** {@code PUT /{index}/_doc/{id}?{query}} with {@code document} as a JSON object. */
    CompletableFuture<JsonNode> putDocument(String index, String id, String query, Object document) {
        return plain("PUT", Endpoints.document(index, id) + "?" + query, transport.tree(document));
    }

    /**
     * {@code POST /{index}/_update/{id}?retry_on_conflict=3}: a fenced change (docs/API.md "Fenced
     * changes") whose script params are {@code change} with {@code token} and {@code key}.
     */
    CompletableFuture<JsonNode> fencedUpdate(
            String index, String id, String key, long token, Map<String, Object> change) {
        String endpoint = Endpoints.update(index, id) + "?retry_on_conflict=" + Fenced.RETRY_ON_CONFLICT;
        return plain("POST", endpoint, fencedBody(key, token, change));
    }

    /** {@code POST /_bulk} of fenced changes: an {@code update} action each, fenced on its own. */
    CompletableFuture<JsonNode> fencedBulk(List<FencedChange> changes, String key, long token) {
        List<ObjectNode> lines = new ArrayList<>();
        for (FencedChange change : changes) {
            ObjectNode action = transport.object();
            action.putObject("update")
                    .put("_index", change.index())
                    .put("_id", change.id())
                    .put("retry_on_conflict", Fenced.RETRY_ON_CONFLICT);
            lines.add(action);
            lines.add(fencedBody(key, token, change.params()));
        }
        return retrier.run(retryBudgetMs, left -> transport.sendLines("POST", "/_bulk", lines));
    }

    /**
     * The body of a fenced {@code _update}: the plugin's script {@code fence} with the change's
     * params, a missing document created ({@code scripted_upsert}), the document answered back.
     */
    private ObjectNode fencedBody(String key, long token, Map<String, Object> change) {
        ObjectNode body = transport.object();
        ObjectNode script = body.putObject("script").put("lang", "eslm").put("source", "fence");
        ObjectNode params = script.putObject("params").put("token", token).put("key", key);
        change.forEach((name, value) -> params.set(name, transport.node(value)));
        body.put("scripted_upsert", true).putObject("upsert");
        return body.put("_source", true);
    }

    /** An {@code error} object of an answer (one item of a {@code _bulk}) as its typed exception. */
    LockException error(int status, JsonNode error) {
        return transport.error(status, error);
    }

    /** A JSON value as a new map of plain values. */
    Map<String, Object> asMap(Object value) {
        return transport.map(value);
    }

    private ObjectNode ownerBody(String owner) {
        return transport.object().put("owner", owner);
    }

    private CompletableFuture<JsonNode> waiting(String endpoint, ObjectNode body, long waitMs) {
        if (waitMs == 0) {
            body.put("wait", 0);
            return plain("POST", endpoint, body);
        }
        return WaitRounds.run(
                waitMs,
                round -> retrier.run(round, left -> {
                    ObjectNode attempt = body.deepCopy().put("wait", Math.max(1, left));
                    return transport.send("POST", endpoint, attempt, Math.max(1, left));
                }));
    }

    private CompletableFuture<JsonNode> plain(String method, String endpoint, ObjectNode body) {
        return retrier.run(retryBudgetMs, left -> transport.send(method, endpoint, body, 0));
    }
}
