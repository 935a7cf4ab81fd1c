package org.eslm.service;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eslm.bridge.NativeOp;

/**
 * Turns the core's answers (rust/lock-core records, as parsed JSON) into the REST bodies that
 * docs/API.md documents. Field names only: no decision is made here.
 */
final class ResponseShapes {
    private ResponseShapes() {}

    /** The body of an answered operation other than a grant. */
    static Map<String, Object> shape(NativeOp op, Object result, String node) {
        return switch (op) {
            case RELEASE -> flagged("released", result);
            case RENEW -> flagged("renewed", result);
            case SESSION_END -> flagged("ended", result);
            case RELEASE_MANY -> Map.of("released", result);
            case FORCE_RELEASE -> {
                List<Map<String, Object>> released = new ArrayList<>();
                for (Object r : (List<?>) result) {
                    Map<?, ?> m = (Map<?, ?>) r;
                    Map<String, Object> one = new LinkedHashMap<>();
                    one.put("owner", m.get("owner"));
                    one.put("fencing_token", m.get("fencing_token"));
                    released.add(one);
                }
                yield Map.of("released", released);
            }
            case KEY_INFO -> keyInfo(result, node);
            default -> copy(result);
        };
    }

    /**
     * The body of a watch's answer (docs/API.md "Watch a lock"), from the core's immediate
     * answer or from its {@code watch_fired} / {@code watch_timed_out} event: {@code changed}
     * with the {@code reason} the lock ended, or {@code changed: false, held: true} when it is
     * still held at the end of the wait (the long-poll convention: 200, not an error).
     */
    static Map<String, Object> watched(Map<?, ?> answer) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("key", answer.get("key"));
        body.put("scope", answer.get("scope"));
        body.put("fencing_token", answer.get("fencing_token"));
        Object reason = answer.get("reason");
        body.put("changed", reason != null);
        if (reason != null) {
            body.put("reason", reason);
        } else {
            body.put("held", true);
        }
        body.put("waited_ms", answer.get("waited_ms") instanceof Number n ? n : 0);
        return body;
    }

    /** The body of a granted acquire: one grant, or (multi-lock) the list of grants. */
    static Map<String, Object> granted(NativeOp op, Object grantOrGrants) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("acquired", true);
        if (op == NativeOp.ACQUIRE) {
            Map<String, Object> grant = copy(grantOrGrants);
            if (grant.get("session") == null) {
                grant.remove("session");
            }
            if (isSemaphore(grant)) {
                // A semaphore's holders share it: permits, not modes (docs/API.md "Semaphores").
                grant.remove("mode");
            }
            body.putAll(grant);
            return body;
        }
        List<?> grants = (List<?>) grantOrGrants;
        List<Map<String, Object>> locks = new ArrayList<>();
        long leaseMs = Long.MAX_VALUE;
        long waitedMs = 0;
        Object owner = null;
        Object session = null;
        for (Object g : grants) {
            Map<?, ?> grant = (Map<?, ?>) g;
            owner = grant.get("owner");
            session = grant.get("session");
            leaseMs = Math.min(leaseMs, ((Number) grant.get("lease_ms")).longValue());
            waitedMs = Math.max(waitedMs, ((Number) grant.get("waited_ms")).longValue());
            Map<String, Object> lock = new LinkedHashMap<>();
            lock.put("key", grant.get("key"));
            lock.put("mode", grant.get("mode"));
            lock.put("scope", grant.get("scope"));
            lock.put("fencing_token", grant.get("fencing_token"));
            locks.add(lock);
        }
        body.put("owner", owner);
        body.put("locks", locks);
        body.put("lease_ms", grants.isEmpty() ? 0 : leaseMs);
        body.put("waited_ms", waitedMs);
        if (session != null) {
            body.put("session", session);
        }
        return body;
    }

    private static Map<String, Object> keyInfo(Object result, String node) {
        Map<String, Object> info = copy(result);
        List<Map<String, Object>> holders = new ArrayList<>();
        boolean semaphore = isSemaphore(info);
        for (Object h : (List<?>) info.get("holders")) {
            Map<String, Object> holder = copy(h);
            holder.put("node", node);
            if (semaphore) {
                holder.remove("mode");
                holder.remove("intention");
            }
            holders.add(holder);
        }
        info.put("holders", holders);
        if (semaphore) {
            List<Map<String, Object>> waiters = new ArrayList<>();
            for (Object w : (List<?>) info.get("waiters")) {
                Map<String, Object> waiter = copy(w);
                waiter.remove("mode");
                waiters.add(waiter);
            }
            info.put("waiters", waiters);
        }
        return info;
    }

    /** Whether a core record (grant, key info) is about a semaphore. */
    private static boolean isSemaphore(Map<String, Object> record) {
        return "semaphore".equals(record.get("scope"));
    }

    private static Map<String, Object> flagged(String flag, Object result) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put(flag, true);
        body.putAll(copy(result));
        return body;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> copy(Object map) {
        return new LinkedHashMap<>((Map<String, Object>) map);
    }
}
