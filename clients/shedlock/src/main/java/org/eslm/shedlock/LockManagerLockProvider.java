package org.eslm.shedlock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.eslm.client.AcquireOptions;
import org.eslm.client.HeldLock;
import org.eslm.client.LockClient;
import org.eslm.client.errors.InvalidLockRequestException;

/**
 * A ShedLock {@link ExtensibleLockProvider} on the Elasticsearch lock manager:
 *
 * <ul>
 *   <li>{@code lock()} is a try-lock of the key {@code <prefix><name>} whose lease is {@code
 *       lockAtMostFor}: the server ends it on its own clock, so no client's clock is trusted. A
 *       held name answers empty.
 *   <li>{@code unlock()} releases it, or, while {@code lockAtLeastFor} has not passed, shortens its
 *       lease to what is left of it (measured on a monotonic clock), so the server frees it then.
 *   <li>{@code extend()} renews the lease of this very grant (owner and fencing token): a holder
 *       whose lock ran out cannot extend, or free, the next holder's lock.
 * </ul>
 *
 * <p>Each {@code lock()} acquires under an owner of its own ({@code <client owner>/shedlock-<uuid>}),
 * so two schedulers in one process exclude each other as two processes do.
 *
 * <p>A {@code lockAtMostFor} longer than the cluster's {@code locks.lease.max} (10 minutes by
 * default, docs/API.md "Settings"; read from the node at the first {@code lock()}) is taken with
 * the maximum as its lease and renewed in the background until {@code lockAtMostFor} has passed
 * ({@link LongLease}), so the lock still ends then, and not before, while this process lives.
 */
public final class LockManagerLockProvider implements ExtensibleLockProvider {
    /** The default key prefix: ShedLock's names live apart from the application's other keys. */
    public static final String DEFAULT_PREFIX = "shedlock-";

    private final LockClient client;
    private final String prefix;
    private volatile Duration maxLease;
    private volatile ScheduledExecutorService renewals;

    public LockManagerLockProvider(LockClient client) {
        this(client, DEFAULT_PREFIX);
    }

    public LockManagerLockProvider(LockClient client, String keyPrefix) {
        this.client = Objects.requireNonNull(client, "client");
        this.prefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
    }

    /** The lock manager key of a ShedLock name. */
    public String keyOf(String lockName) {
        return prefix + lockName;
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration config) {
        try {
            return tryLock(config);
        } catch (InvalidLockRequestException refused) {
            if (!refused.reason().contains("locks.lease.max")) {
                throw refused;
            }
            maxLease = null; // the maximum was lowered since it was read: read it again, once
            return tryLock(config);
        }
    }

    private Optional<SimpleLock> tryLock(LockConfiguration config) {
        LockClient acquirer = client.withOwner(client.owner() + "/shedlock-" + UUID.randomUUID());
        long startedAt = System.nanoTime();
        Duration atMost = config.getLockAtMostFor();
        Duration max = maxLease();
        boolean beyondMax = atMost.compareTo(max) > 0;
        AcquireOptions options = AcquireOptions.defaults()
                .withLease(beyondMax ? max : atMost)
                .withWatchdog(false); // lockAtMostFor is a bound, not a lease to keep alive
        return acquirer.tryAcquire(keyOf(config.getName()), options)
                .map(held -> new LeaseLock(
                        this, held, startedAt, config.getLockAtLeastFor(), keepUntil(held, startedAt, atMost)));
    }

    /** Renewals until {@code atMost} after {@code startedAt} if it is beyond the maximum, else null. */
    LongLease keepUntil(HeldLock held, long startedAt, Duration atMost) {
        Duration max = maxLease();
        if (atMost.compareTo(max) <= 0) {
            return null;
        }
        return LongLease.start(renewals(), held, startedAt + atMost.toNanos(), max);
    }

    /** The longest lease the cluster grants ({@code locks.lease.max}), read once from the node. */
    Duration maxLease() {
        Duration known = maxLease;
        if (known == null) {
            known = client.maxLease();
            maxLease = known;
        }
        return known;
    }

    /** One daemon thread for every long lease of this provider, started at the first. */
    private synchronized ScheduledExecutorService renewals() {
        if (renewals == null) {
            ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(1, runnable -> {
                Thread thread = new Thread(runnable, "eslm-shedlock-renewals");
                thread.setDaemon(true);
                return thread;
            });
            pool.setRemoveOnCancelPolicy(true);
            renewals = pool;
        }
        return renewals;
    }
}
