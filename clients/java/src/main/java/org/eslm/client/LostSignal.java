package org.eslm.client;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eslm.client.errors.LockException;

/**
 * The lost state of a lock or session: set once, its listeners told once each (a listener added
 * after the loss is told at once). A listener that throws does not keep the others from being told.
 */
final class LostSignal {
    private static final System.Logger LOG = System.getLogger(LostSignal.class.getName());

    private final String what;
    private final List<LockLostListener> listeners = new CopyOnWriteArrayList<>();
    private LockException cause;

    LostSignal(String what) {
        this.what = what;
    }

    synchronized LockException cause() {
        return cause;
    }

    void add(LockLostListener listener) {
        LockException already;
        synchronized (this) {
            already = cause;
            if (already == null) {
                listeners.add(listener);
            }
        }
        if (already != null) {
            tell(listener, already);
        }
    }

    /** Marks it lost (the first cause wins) and tells the listeners; false if it already was. */
    boolean lose(LockException lostBy) {
        synchronized (this) {
            if (cause != null) {
                return false;
            }
            cause = lostBy;
        }
        LOG.log(System.Logger.Level.WARNING, what + " was lost: " + lostBy.getMessage());
        listeners.forEach(listener -> tell(listener, lostBy));
        return true;
    }

    private void tell(LockLostListener listener, LockException lostBy) {
        try {
            listener.onLockLost(lostBy);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "a lock-lost listener of " + what + " failed", e);
        }
    }
}
