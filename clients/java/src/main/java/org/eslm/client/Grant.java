package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.eslm.client.internal.Wire;

/** One granted lock as an acquire answer describes it (docs/API.md, "POST /_locks/{key}/_acquire"). */
record Grant(
        String key,
        LockMode mode,
        LockScope scope,
        long fencingToken,
        long leaseMs,
        long waitedMs,
        boolean reentrant,
        int permits,
        int remaining) {

    /** {@code POST /_locks/{key}/_acquire}: every field at the top level. */
    static Grant single(JsonNode answer) {
        return of(answer, answer);
    }

    /** {@code POST /_elections/{name}/_campaign}: the name as key, the term as fencing token. */
    static Grant elected(JsonNode answer) {
        return new Grant(
                answer.get("name").asText(),
                LockMode.EXCLUSIVE,
                LockScope.ELECTION,
                answer.get("term").asLong(),
                answer.get("lease_ms").asLong(),
                answer.path("waited_ms").asLong(),
                false,
                0,
                0);
    }

    /** {@code POST /_locks/_acquire}: one entry per lock; lease and wait shared by all. */
    static List<Grant> multi(JsonNode answer) {
        List<Grant> grants = new ArrayList<>();
        for (JsonNode lock : answer.get("locks")) {
            grants.add(of(lock, answer));
        }
        return grants;
    }

    /** The lock's own fields from {@code lock}, the request's from {@code answer}. */
    private static Grant of(JsonNode lock, JsonNode answer) {
        return new Grant(
                lock.get("key").asText(),
                // A semaphore's grant has permits, no mode: its holders share it.
                lock.has("mode") ? Wire.parse(LockMode.class, lock.get("mode").asText()) : LockMode.SHARED,
                Wire.parse(LockScope.class, lock.get("scope").asText()),
                lock.get("fencing_token").asLong(),
                answer.get("lease_ms").asLong(),
                answer.path("waited_ms").asLong(),
                lock.path("reentrant").asBoolean(false),
                lock.path("permits").asInt(0),
                lock.path("remaining").asInt(0));
    }
}
