package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** One granted lock as an acquire answer describes it (docs/API.md, "Answer 200"). */
record Grant(
        String key, LockMode mode, LockScope scope, long fencingToken, long leaseMs, long waitedMs, boolean reentrant) {

    /** {@code POST /_locks/{key}/_acquire}: every field at the top level. */
    static Grant single(JsonNode answer) {
        return new Grant(
                answer.get("key").asText(),
                LockMode.fromWire(answer.get("mode").asText()),
                LockScope.fromWire(answer.get("scope").asText()),
                answer.get("fencing_token").asLong(),
                answer.get("lease_ms").asLong(),
                answer.path("waited_ms").asLong(),
                answer.path("reentrant").asBoolean(false));
    }

    /** {@code POST /_locks/_acquire}: one entry per lock; lease and wait shared by all. */
    static List<Grant> multi(JsonNode answer) {
        List<Grant> grants = new ArrayList<>();
        for (JsonNode lock : answer.get("locks")) {
            grants.add(new Grant(
                    lock.get("key").asText(),
                    LockMode.fromWire(lock.get("mode").asText()),
                    LockScope.fromWire(lock.get("scope").asText()),
                    lock.get("fencing_token").asLong(),
                    answer.get("lease_ms").asLong(),
                    answer.path("waited_ms").asLong(),
                    false));
        }
        return grants;
    }
}
