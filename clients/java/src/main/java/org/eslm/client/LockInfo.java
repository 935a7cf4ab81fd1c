package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.eslm.client.internal.Wire;

/**
 * Who holds and who waits for one key now ({@code GET /_locks/{key}}, docs/API.md): a snapshot,
 * stale as soon as it is read. Use it to look, never to decide who may write (that is the fencing
 * token's job).
 *
 * @param holders the grants, with the intention locks of tree locks below a tree node
 * @param waiters in queue order, the next to be served first
 */
public record LockInfo(String key, LockScope scope, List<Holder> holders, List<Waiter> waiters) {
    /** A grant: {@code leaseMs} left, {@code heldMs} since granted, {@code node} that holds it. */
    public record Holder(
            String owner,
            LockMode mode,
            long fencingToken,
            long leaseMs,
            long heldMs,
            String node,
            boolean intention) {}

    /** A queued request: {@code waitedMs} so far, {@code waitLeftMs} before it gives up. */
    public record Waiter(String owner, LockMode mode, int priority, long waitedMs, long waitLeftMs) {}

    public LockInfo {
        holders = List.copyOf(holders);
        waiters = List.copyOf(waiters);
    }

    /** Whether anyone holds the key now (an intention lock alone does not count). */
    public boolean isLocked() {
        return holders.stream().anyMatch(holder -> !holder.intention());
    }

    static LockInfo of(String key, LockScope scope, JsonNode answer) {
        List<Holder> holders = new ArrayList<>();
        for (JsonNode h : answer.path("holders")) {
            holders.add(new Holder(
                    h.path("owner").asText(),
                    mode(h),
                    h.path("fencing_token").asLong(),
                    h.path("lease_ms").asLong(),
                    h.path("held_ms").asLong(),
                    h.path("node").asText(null),
                    h.path("intention").asBoolean(false)));
        }
        List<Waiter> waiters = new ArrayList<>();
        for (JsonNode w : answer.path("waiters")) {
            waiters.add(new Waiter(
                    w.path("owner").asText(),
                    mode(w),
                    w.path("priority").asInt(),
                    w.path("waited_ms").asLong(),
                    w.path("wait_left_ms").asLong()));
        }
        return new LockInfo(key, scope, holders, waiters);
    }

    private static LockMode mode(JsonNode entry) {
        return entry.has("mode") ? Wire.parse(LockMode.class, entry.get("mode").asText()) : LockMode.SHARED;
    }
}
