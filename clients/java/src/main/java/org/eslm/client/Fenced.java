package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.eslm.client.FencedResult.Outcome;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockTransportException;
import org.eslm.client.errors.ServerErrors;
import org.eslm.client.errors.StaleTokenException;
import org.eslm.client.errors.VersionConflictException;

/**
 * Fenced changes to the documents a lock protects (docs/API.md "Fenced changes"): an {@code
 * _update} that runs the plugin's update script ({@code "lang": "eslm", "source": "fence"}) with
 * the held lock's token and key. On the document's primary, in the same operation as the change,
 * the script applies it only when the token is at least the highest that changed the document
 * (kept in its {@code eslm_fence}), and otherwise makes the update a {@code noop}; the answer
 * carries the document with its fence, so a {@code noop} whose fence is above the token is stale.
 *
 * <p>A read-modify-write is a fenced read first (the update with no change: it raises the fence to
 * the token and answers the source, so a stale holder's write after it is refused and one before
 * it is in what was read), then the function's result written whole ({@code replace}) with the
 * same token, refused if a later holder came in between.
 */
final class Fenced {
    /** The field of a fenced document that holds its fence: the plugin writes it, a change never may. */
    static final String FENCE_FIELD = "eslm_fence";

    /** Elasticsearch re-runs the read-script-write on a concurrent write of the document; 3 is plenty. */
    static final int RETRY_ON_CONFLICT = 3;

    /** The params of a fenced read (no change: the fence raised, the source answered). */
    static final Map<String, Object> READ = Map.of();

    /** The params of a fenced delete (a tombstone that keeps the fence). */
    static final Map<String, Object> DELETE = Map.of("delete", true);

    /** The lock a change is fenced by: its key and fencing token. */
    record Fence(String key, long token) {}

    private Fenced() {}

    /** {@code value} if it is a non-empty name of an index or document, else the argument refused. */
    static String name(String value, String what) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("[" + what + "] must be a non-empty string, got [" + value + "]");
        }
        return value;
    }

    /** The params of a partial document, which must not set the fence. */
    static Map<String, Object> docParams(Map<String, ?> doc) {
        return Map.of("doc", document(doc, "doc"));
    }

    /** The params of field operations, in order. */
    static Map<String, Object> opsParams(List<FieldOp> ops) {
        if (ops == null) {
            throw new IllegalArgumentException("[ops] must be a list of field operations, got [null]");
        }
        List<Map<String, Object>> json = new ArrayList<>();
        for (FieldOp op : ops) {
            if (op == null) {
                throw new IllegalArgumentException("[ops] entry " + json.size() + " is null");
            }
            json.add(op.toJson());
        }
        return Map.of("ops", json);
    }

    private static Map<String, ?> document(Map<String, ?> doc, String what) {
        if (doc == null) {
            throw new IllegalArgumentException("[" + what + "] must be a document (a map), got [null]");
        }
        if (doc.containsKey(FENCE_FIELD)) {
            throw new IllegalArgumentException(
                    "[" + what + "] must not set [" + FENCE_FIELD + "]: the fence is the plugin's to write");
        }
        return doc;
    }

    /** One fenced change; the document as it now stands (null for a tombstone). */
    static Map<String, Object> change(
            Requests requests, String index, String id, Fence fence, Map<String, Object> params) {
        JsonNode answer;
        try {
            answer = Sync.await(requests.fencedUpdate(index, id, fence.key(), fence.token(), params));
        } catch (LockException e) {
            throw explained(e);
        }
        FencedResult result = outcome(requests, index, id, fence, answer);
        if (result.error() != null) {
            throw result.error();
        }
        return result.source();
    }

    /**
     * A fenced read, {@code change} applied to a copy of the source (null when there is none), and
     * its result written with the same token; null or the source unchanged writes nothing. {@code
     * stillHeld} throws if the lock is known lost between the read and the write.
     */
    static Map<String, Object> readModifyWrite(
            Requests requests,
            String index,
            String id,
            Fence fence,
            UnaryOperator<Map<String, Object>> change,
            Runnable stillHeld) {
        Map<String, Object> current = change(requests, index, id, fence, READ);
        Map<String, Object> changed = change.apply(current == null ? null : requests.asMap(current));
        if (changed == null || changed.equals(current)) {
            return current;
        }
        Map<String, ?> replacement = document(changed, "the change's result");
        stillHeld.run();
        return change(requests, index, id, fence, Map.of("replace", replacement));
    }

    /** Many fenced changes in one {@code _bulk}: a result per change, in order. */
    static List<FencedResult> bulk(Requests requests, List<FencedChange> changes, Fence fence) {
        if (changes.isEmpty()) {
            return List.of();
        }
        JsonNode items = Sync.await(requests.fencedBulk(changes, fence.key(), fence.token()))
                .path("items");
        List<FencedResult> results = new ArrayList<>();
        for (int i = 0; i < changes.size(); i++) {
            FencedChange change = changes.get(i);
            JsonNode item = items.path(i).path("update");
            if (item.has("error")) {
                LockException error = requests.error(item.path("status").asInt(), item.get("error"));
                results.add(new FencedResult(change.index(), change.id(), Outcome.FAILED, null, 0, explained(error)));
            } else {
                results.add(outcome(requests, change.index(), change.id(), fence, item));
            }
        }
        return results;
    }

    /**
     * How a fenced update answered (docs/API.md "Fenced changes", how to read the answer): {@code
     * noop} with a fence token above ours is stale; anything else applied.
     */
    static FencedResult outcome(Requests requests, String index, String id, Fence fence, JsonNode answer) {
        JsonNode source = answer.path("get").path("_source");
        JsonNode fenced = source.path(FENCE_FIELD);
        if (!fenced.path("token").isIntegralNumber()) {
            LockException unreadable = new LockTransportException(
                    200,
                    "fenced change of [" + index + "/" + id + "] answered without the document's fence: " + answer,
                    null);
            return new FencedResult(index, id, Outcome.FAILED, null, 0, unreadable);
        }
        long seen = fenced.path("token").asLong();
        if ("noop".equals(answer.path("result").asText()) && seen > fence.token()) {
            StaleTokenException stale = new StaleTokenException(
                    "fenced change of [" + index + "/" + id + "] refused: the document's fence is token [" + seen
                            + "] of [" + fenced.path("key").asText() + "], this lock's token is [" + fence.token()
                            + "]: a newer holder has changed it",
                    seen,
                    fence.token());
            return new FencedResult(index, id, Outcome.STALE, null, seen, stale);
        }
        Map<String, Object> now = null;
        if (!fenced.path("deleted").asBoolean(false)) {
            now = requests.asMap(source);
            now.remove(FENCE_FIELD);
        }
        return new FencedResult(index, id, Outcome.APPLIED, now, seen, null);
    }

    /**
     * A refused fenced change with the plugin's reason (Elasticsearch's own is {@code failed to
     * execute script}; the plugin's, naming the field, is its {@code caused_by}); a 409 as a
     * {@link VersionConflictException} (another write got in between {@code retry_on_conflict}
     * times: nothing written).
     */
    static LockException explained(LockException error) {
        if (VersionConflictException.TYPE.equals(error.type())) {
            return new VersionConflictException(error.reason(), error);
        }
        if (error.details().get("caused_by") instanceof Map<?, ?> cause
                && cause.get("reason") instanceof String reason
                && !error.reason().contains(reason)) {
            return ServerErrors.of(error.status(), error.type(), error.reason() + ": " + reason, error.details());
        }
        return error;
    }
}
