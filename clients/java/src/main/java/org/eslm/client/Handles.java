package org.eslm.client;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * How many open handles each grant has in this client. A reentrant acquire (the owner already
 * held the key) hands out a second {@link HeldLock} of the same grant, and the server keeps no
 * count: releasing on the inner handle's close would free the lock while the outer block still
 * relies on it. So a grant is released when its last handle closes.
 */
final class Handles {
    private final ConcurrentMap<String, Integer> open = new ConcurrentHashMap<>();
    /** The acquisition id of each (owner, scope, key) with an open handle (docs/API.md "Acquisitions"). */
    private final ConcurrentMap<String, String> acquisitions = new ConcurrentHashMap<>();

    /**
     * The acquisition an acquire of {@code targets} by {@code owner} is: the one under which this
     * client holds all of them open for that owner (a nested acquire: the server answers with the
     * same grant), else a new one. A new acquisition of a lock its owner holds elsewhere (another
     * process under a shared owner) replaces that grant under a newer token.
     */
    String acquisitionFor(String owner, List<LockTarget> targets) {
        String held = null;
        for (LockTarget target : targets) {
            String id = acquisitions.get(heldId(owner, target.scope(), target.key()));
            if (id == null || (held != null && held.equals(id) == false)) {
                return UUID.randomUUID().toString();
            }
            held = id;
        }
        return held != null ? held : UUID.randomUUID().toString();
    }

    /** How many grants have an open handle. */
    int openGrants() {
        return open.size();
    }

    /** One more open handle of {@code lock}'s grant. */
    void opened(HeldLock lock) {
        open.merge(id(lock), 1, Integer::sum);
        acquisitions.put(heldId(lock.owner(), lock.scope(), lock.key()), lock.acquisition());
    }

    /** One handle fewer; true if it was the last (or was never counted), so the grant is released. */
    boolean closedLast(HeldLock lock) {
        boolean[] last = {true};
        open.computeIfPresent(id(lock), (id, count) -> {
            last[0] = count == 1;
            return count == 1 ? null : count - 1;
        });
        if (last[0]) {
            acquisitions.remove(heldId(lock.owner(), lock.scope(), lock.key()), lock.acquisition());
        }
        return last[0];
    }

    private static String heldId(String owner, LockScope scope, String key) {
        return owner + '\n' + scope + '\n' + key;
    }

    private static String id(HeldLock lock) {
        return lock.owner() + '\n' + lock.scope() + '\n' + lock.key() + '\n' + lock.fencingToken();
    }
}
