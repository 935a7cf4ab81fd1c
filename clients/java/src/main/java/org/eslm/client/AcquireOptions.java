package org.eslm.client;

import java.time.Duration;
import java.util.Objects;
import org.eslm.client.internal.Durations;

/**
 * How to acquire (docs/API.md, "POST /_locks/{key}/_acquire"). Immutable; start from {@link
 * #defaults()} and change what you need:
 *
 * <pre>{@code
 * AcquireOptions.defaults().withLease(Duration.ofSeconds(30)).withWait(Duration.ofSeconds(5)).shared()
 * }</pre>
 *
 * <p>An acquire waits until granted by default, as {@code ReentrantLock.lock()}, Curator's
 * {@code InterProcessMutex.acquire()} and Redisson's {@code lock()} do: {@link #withWait} bounds
 * the wait ({@code LockWaitTimeoutException} when it runs out) and {@link #tryOnce()} does not
 * wait ({@code LockConflictException} when busy). A wait longer than the server's {@code
 * locks.wait.max} is sent in rounds, each sent again with the time left (README "Waiting").
 *
 * @param mode exclusive (default) or shared
 * @param scope a key (default) or a tree path
 * @param priority 0 (lowest) to 9, or null for the server's default ({@link #FOREGROUND})
 * @param maxWait how long to queue; null (default) until granted; {@link Duration#ZERO} tries once
 * @param lease the lease, or null for the server's {@code locks.lease.default}; ignored under a
 *     session, whose ttl applies
 * @param watchdog whether the client renews the lease while the lock is held (default true)
 * @param lockDelay the lock-delay (docs/API.md "Lock-delay"), at most a minute: after the lock ends
 *     without a release (its lease ran out, it was force-released), its keys wait this long before
 *     another owner gets them; null for the server's {@code locks.lock_delay.default}; not for
 *     semaphores
 * @param preempt the grace given to holders of lower priority in the way (docs/API.md
 *     "Preemption"), or null: no preemption; needs a wait and the preempt privilege; not for
 *     multi-locks and semaphores
 * @param onRevoke told when this lock's holder is asked to yield to a preempting waiter, or null
 */
public record AcquireOptions(
        LockMode mode,
        LockScope scope,
        Integer priority,
        Duration maxWait,
        Duration lease,
        boolean watchdog,
        Duration lockDelay,
        Duration preempt,
        RevokeListener onRevoke) {
    /** docs/API.md, "Priorities": {@code background} is 2, {@code foreground} (the default) 7. */
    public static final int BACKGROUND = 2;

    public static final int FOREGROUND = 7;

    private static final AcquireOptions DEFAULTS =
            new AcquireOptions(LockMode.EXCLUSIVE, LockScope.KEY, null, null, null, true, null, null, null);

    public AcquireOptions {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(scope, "scope");
        if (priority != null && (priority < 0 || priority > 9)) {
            throw new IllegalArgumentException("[priority] must be 0 to 9, got [" + priority + "]");
        }
        if (maxWait != null) {
            Durations.millis(maxWait, "wait");
        }
        if (lease != null) {
            Durations.positiveMillis(lease, "lease");
        }
        if (lockDelay != null) {
            Durations.millis(lockDelay, "lock_delay");
        }
        if (preempt != null) {
            Durations.positiveMillis(preempt, "preempt");
        }
    }

    /** The options without a lock-delay of their own, as before it existed. */
    public AcquireOptions(
            LockMode mode, LockScope scope, Integer priority, Duration maxWait, Duration lease, boolean watchdog) {
        this(mode, scope, priority, maxWait, lease, watchdog, null, null, null);
    }

    /** Exclusive, key scope, the server's priority and lease, waiting until granted, watchdog on. */
    public static AcquireOptions defaults() {
        return DEFAULTS;
    }

    public AcquireOptions withMode(LockMode newMode) {
        return new AcquireOptions(newMode, scope, priority, maxWait, lease, watchdog, lockDelay, preempt, onRevoke);
    }

    public AcquireOptions shared() {
        return withMode(LockMode.SHARED);
    }

    public AcquireOptions withScope(LockScope newScope) {
        return new AcquireOptions(mode, newScope, priority, maxWait, lease, watchdog, lockDelay, preempt, onRevoke);
    }

    /** Tree scope: the key is an absolute path such as {@code /orders/eu/42}. */
    public AcquireOptions tree() {
        return withScope(LockScope.TREE);
    }

    public AcquireOptions withPriority(int newPriority) {
        return new AcquireOptions(mode, scope, newPriority, maxWait, lease, watchdog, lockDelay, preempt, onRevoke);
    }

    /** Waits at most {@code newWait} ({@link Duration#ZERO}: tries once; null: until granted). */
    public AcquireOptions withWait(Duration newWait) {
        return new AcquireOptions(mode, scope, priority, newWait, lease, watchdog, lockDelay, preempt, onRevoke);
    }

    /** Tries once: a busy lock is {@code LockConflictException} at once (0.1.0's default). */
    public AcquireOptions tryOnce() {
        return withWait(Duration.ZERO);
    }

    /** Waits until granted (the default). */
    public AcquireOptions untilGranted() {
        return withWait(null);
    }

    /** Whether an acquire with these options tries once only. */
    public boolean triesOnce() {
        return maxWait != null && maxWait.isZero();
    }

    public AcquireOptions withLease(Duration newLease) {
        return new AcquireOptions(mode, scope, priority, maxWait, newLease, watchdog, lockDelay, preempt, onRevoke);
    }

    /** The lock-delay; {@link Duration#ZERO} for none even when the server's setting has one. */
    public AcquireOptions withLockDelay(Duration newLockDelay) {
        return new AcquireOptions(mode, scope, priority, maxWait, lease, watchdog, newLockDelay, preempt, onRevoke);
    }

    /** Preempts: holders of lower priority in the way are asked to yield within {@code grace}. */
    public AcquireOptions withPreempt(Duration grace) {
        return new AcquireOptions(mode, scope, priority, maxWait, lease, watchdog, lockDelay, grace, onRevoke);
    }

    /** Tells {@code listener} when this lock's holder is asked to yield (the loss watch must be on). */
    public AcquireOptions withOnRevoke(RevokeListener listener) {
        return new AcquireOptions(mode, scope, priority, maxWait, lease, watchdog, lockDelay, preempt, listener);
    }

    /** Without the watchdog the lease simply runs out unless {@link HeldLock#renew} is called. */
    public AcquireOptions withWatchdog(boolean on) {
        return new AcquireOptions(mode, scope, priority, maxWait, lease, on, lockDelay, preempt, onRevoke);
    }
}
