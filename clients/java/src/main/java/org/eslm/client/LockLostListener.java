package org.eslm.client;

import org.eslm.client.errors.LockException;

/**
 * Told once when a held lock (or session) is lost: the server reported it gone, or renewals failed
 * until its lease ran out. Called on the client's watchdog thread: return quickly (hand long work
 * to an executor), and stop or fence the work the lock protected.
 */
@FunctionalInterface
public interface LockLostListener {
    void onLockLost(LockException cause);
}
