package org.eslm.rest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The election bodies of docs/API.md "Elections", renamed from the lock answers they are:
 * owner → {@code leader} (or {@code candidates} while queued), fencing token → {@code term},
 * key → {@code name}. Field names only: no decision is made here.
 */
final class ElectionShapes {
    private ElectionShapes() {}

    /** A campaign's grant: the candidate is the leader. */
    static Map<String, Object> elected(Map<String, Object> grant) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", grant.get("key"));
        body.put("leader", grant.get("owner"));
        body.put("value", grant.get("value"));
        body.put("term", grant.get("fencing_token"));
        body.put("lease_ms", grant.get("lease_ms"));
        body.put("waited_ms", grant.get("waited_ms"));
        if (grant.get("session") != null) {
            body.put("session", grant.get("session"));
        }
        return body;
    }

    /** The state from the key's info: the leader (holder) if any, and the queued candidates. */
    static Map<String, Object> state(Map<String, Object> info) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", info.get("key"));
        List<?> holders = (List<?>) info.get("holders");
        Map<?, ?> leader = holders == null || holders.isEmpty() ? Map.of() : (Map<?, ?>) holders.get(0);
        body.put("leader", leader.get("owner"));
        body.put("value", leader.get("value"));
        Object term = leader.get("fencing_token");
        body.put("term", term == null ? 0L : term);
        Object lease = leader.get("lease_ms");
        body.put("lease_ms", lease == null ? 0L : lease);
        List<Object> candidates = new ArrayList<>();
        Object waiters = info.get("waiters");
        if (waiters instanceof List<?> list) {
            for (Object w : list) {
                candidates.add(((Map<?, ?>) w).get("owner"));
            }
        }
        body.put("candidates", candidates);
        return body;
    }

    /** The term of a {@link #state}: 0 when there is no leader. */
    static long term(Map<String, Object> state) {
        return ((Number) state.get("term")).longValue();
    }

    /** An observe's answer: the state, and whether the term is not the one observed. */
    static Map<String, Object> observed(Map<String, Object> state, long observedTerm) {
        Map<String, Object> body = new LinkedHashMap<>(state);
        body.put("changed", term(state) != observedTerm);
        return body;
    }
}
