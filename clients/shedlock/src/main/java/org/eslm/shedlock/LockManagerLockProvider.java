package org.eslm.shedlock;

import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.eslm.client.AcquireOptions;
import org.eslm.client.LockClient;

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
 * so two schedulers in one process exclude each other as two processes do. {@code lockAtMostFor}
 * must not exceed the cluster's {@code locks.lease.max} (10 minutes by default, docs/API.md
 * "Settings"); a longer one is refused with {@code InvalidLockRequestException}.
 */
public final class LockManagerLockProvider implements ExtensibleLockProvider {
    /** The default key prefix: ShedLock's names live apart from the application's other keys. */
    public static final String DEFAULT_PREFIX = "shedlock-";

    private final LockClient client;
    private final String prefix;

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
        LockClient acquirer = client.withOwner(client.owner() + "/shedlock-" + UUID.randomUUID());
        long startedAt = System.nanoTime();
        AcquireOptions options = AcquireOptions.defaults()
                .withLease(config.getLockAtMostFor())
                .withWatchdog(false); // lockAtMostFor is a bound, not a lease to keep alive
        return acquirer.tryAcquire(keyOf(config.getName()), options)
                .map(held -> new LeaseLock(held, startedAt, config.getLockAtLeastFor()));
    }
}
