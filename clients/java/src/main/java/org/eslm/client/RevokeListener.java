package org.eslm.client;

import java.time.Duration;

/**
 * Told once when a preempting waiter of higher priority asks the holder of a lock to yield
 * (docs/API.md "Preemption"): release it within {@code grace}, or it is taken away and the lock
 * is lost. The watchdog goes on renewing meanwhile. Called on a client thread: return quickly.
 */
@FunctionalInterface
public interface RevokeListener {
    void revokeRequested(HeldLock lock, Duration grace);
}
