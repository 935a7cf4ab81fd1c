package org.eslm.client;

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

    /** One more open handle of {@code lock}'s grant. */
    void opened(HeldLock lock) {
        open.merge(id(lock), 1, Integer::sum);
    }

    /** One handle fewer; true if it was the last (or was never counted), so the grant is released. */
    boolean closedLast(HeldLock lock) {
        boolean[] last = {true};
        open.computeIfPresent(id(lock), (id, count) -> {
            last[0] = count == 1;
            return count == 1 ? null : count - 1;
        });
        return last[0];
    }

    private static String id(HeldLock lock) {
        return lock.owner() + '\n' + lock.scope() + '\n' + lock.key() + '\n' + lock.fencingToken();
    }
}
