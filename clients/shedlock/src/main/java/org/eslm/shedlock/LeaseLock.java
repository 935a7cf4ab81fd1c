package org.eslm.shedlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.eslm.client.HeldLock;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.LockNotHeldException;

/**
 * One ShedLock grant: a {@link HeldLock} without a watchdog, whose lease is the time the lock may
 * still be held. Usable once: after {@code unlock()} or {@code extend()} it throws {@link
 * IllegalStateException}, as ShedLock's {@link SimpleLock} contract says.
 */
final class LeaseLock implements SimpleLock {
    private static final System.Logger LOG = System.getLogger(LeaseLock.class.getName());

    private final LockManagerLockProvider provider;
    private final HeldLock held;
    private final long startedAtNanos;
    private final Duration lockAtLeastFor;
    private final LongLease longLease;
    private final AtomicBoolean used = new AtomicBoolean();

    /** @param longLease the renewals of a lockAtMostFor beyond {@code locks.lease.max}, or null */
    LeaseLock(
            LockManagerLockProvider provider,
            HeldLock held,
            long startedAtNanos,
            Duration lockAtLeastFor,
            LongLease longLease) {
        this.provider = provider;
        this.held = held;
        this.startedAtNanos = startedAtNanos;
        this.lockAtLeastFor = lockAtLeastFor;
        this.longLease = longLease;
    }

    /**
     * Frees the lock, or leaves it to expire when {@code lockAtLeastFor} is still running: the
     * lease is renewed to exactly what is left of it. A grant that already ran out is gone; it is
     * never someone else's to free (the release names this grant's token).
     */
    @Override
    public void unlock() {
        use();
        Duration left = lockAtLeastFor.minusNanos(System.nanoTime() - startedAtNanos);
        if (left.compareTo(provider.maxLease()) > 0) {
            // lockAtLeastFor beyond locks.lease.max: renewed until it has passed, then it runs out
            provider.keepUntil(held, startedAtNanos, lockAtLeastFor);
            return;
        }
        try {
            if (left.compareTo(Duration.ofMillis(1)) >= 0) {
                held.renew(left);
            } else {
                held.close();
            }
        } catch (LockNotHeldException | LockLostException gone) {
            LOG.log(System.Logger.Level.INFO, "{0} had already expired at unlock", held);
        }
    }

    /**
     * A new lock for {@code lockAtMostFor} from now (the server's now) if this grant is still held;
     * empty if it ran out or was taken over.
     */
    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        use();
        long startedAt = System.nanoTime();
        Duration max = provider.maxLease();
        try {
            held.renew(lockAtMostFor.compareTo(max) > 0 ? max : lockAtMostFor);
        } catch (LockNotHeldException gone) {
            return Optional.empty();
        }
        return Optional.of(new LeaseLock(
                provider, held, startedAt, lockAtLeastFor, provider.keepUntil(held, startedAt, lockAtMostFor)));
    }

    /** Marks this lock spent, and stops its renewals: unlock and extend take over its lease. */
    private void use() {
        if (!used.compareAndSet(false, true)) {
            throw new IllegalStateException(held + " was already unlocked or extended");
        }
        if (longLease != null) {
            longLease.stop();
        }
    }
}
