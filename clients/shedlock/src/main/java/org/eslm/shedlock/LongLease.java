package org.eslm.shedlock;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.eslm.client.HeldLock;
import org.eslm.client.errors.LockException;

/**
 * Keeps a grant alive until {@code lockAtMostFor} when that is longer than the cluster's {@code
 * locks.lease.max}: the lock is taken with the maximum as its lease and renewed every third of it,
 * each renewal asking for the maximum or for what is left until {@code lockAtMostFor}, whichever is
 * shorter, so the lease ends exactly then (on the server's clock) and never sooner while renewals
 * succeed. A renewal that finds the lock gone ends the renewals; the lock is then free for the next
 * scheduler, as with any lease that ran out.
 */
final class LongLease {
    private static final System.Logger LOG = System.getLogger(LongLease.class.getName());

    private final ScheduledExecutorService scheduler;
    private final HeldLock held;
    private final long endNanos;
    private final Duration maxLease;
    private boolean stopped;
    private ScheduledFuture<?> next;

    private LongLease(ScheduledExecutorService scheduler, HeldLock held, long endNanos, Duration maxLease) {
        this.scheduler = scheduler;
        this.held = held;
        this.endNanos = endNanos;
        this.maxLease = maxLease;
    }

    /** Renews {@code held}, granted with a lease of {@code maxLease}, until {@code endNanos}. */
    static LongLease start(ScheduledExecutorService scheduler, HeldLock held, long endNanos, Duration maxLease) {
        LongLease lease = new LongLease(scheduler, held, endNanos, maxLease);
        lease.schedule();
        return lease;
    }

    /** No renewal starts after this returns. */
    synchronized void stop() {
        stopped = true;
        if (next != null) {
            next.cancel(false);
        }
    }

    private synchronized void schedule() {
        if (stopped) {
            return;
        }
        try {
            next = scheduler.schedule(this::renew, maxLease.toMillis() / 3, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException shutDown) {
            stopped = true;
        }
    }

    private void renew() {
        Duration left = Duration.ofNanos(endNanos - System.nanoTime());
        if (left.compareTo(Duration.ofMillis(1)) < 0) {
            return; // lockAtMostFor has passed: the last lease ran out with it
        }
        Duration lease = left.compareTo(maxLease) < 0 ? left : maxLease;
        synchronized (this) {
            if (stopped) {
                return;
            }
        }
        try {
            held.renew(lease);
        } catch (LockException gone) {
            LOG.log(System.Logger.Level.WARNING, "{0} could not be kept until lockAtMostFor: {1}", held, gone);
            return;
        }
        if (left.compareTo(maxLease) > 0) {
            schedule();
        }
    }
}
