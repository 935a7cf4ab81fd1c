package org.eslm.spring;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.eslm.client.AcquireOptions;
import org.eslm.client.LockClient;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * Spring Integration's {@code LockRegistry} over the lock manager: {@code obtain(key)} answers the
 * same {@link DistributedLock} for a key each time (until {@link #expireUnusedOlderThan} drops it
 * unused), reentrant per thread as Spring's Redis and JDBC registries' locks are. A lock taken
 * with {@code lock()} is renewed by the client's watchdog while held; one taken with {@code
 * lock(ttl)} is not, and ends by itself after {@code ttl} (then {@code unlock()} throws {@code
 * ConcurrentModificationException}, as Spring's own registries do for a lock lost in the store).
 * Keys are {@code prefix + key.toString()} (docs/API.md: a key is at most 512 bytes).
 *
 * <p>Every acquisition is made by an owner of its own (the client's default), so two registries
 * (in one process or many) exclude each other, and so do two threads of one registry.
 */
public final class LockManagerLockRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {
    private final LockClient client;
    private final String prefix;
    private final AcquireOptions options;
    private final ConcurrentMap<String, RegistryLock> locks = new ConcurrentHashMap<>();

    /** Keys under {@code prefix}, with the server's lease, renewed while held. */
    public LockManagerLockRegistry(LockClient client, String prefix) {
        this(client, prefix, AcquireOptions.defaults());
    }

    /**
     * Keys under {@code prefix}, acquired with {@code options} (their lease, priority, mode;
     * their wait is replaced by each call's: {@code lock()} waits until granted, {@code tryLock()}
     * not at all).
     */
    public LockManagerLockRegistry(LockClient client, String prefix, AcquireOptions options) {
        this.client = Objects.requireNonNull(client, "client");
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        this.options = Objects.requireNonNull(options, "options");
    }

    @Override
    public DistributedLock obtain(Object lockKey) {
        String key = keyOf(lockKey);
        return locks.computeIfAbsent(key, k -> new RegistryLock(client.newThreadLock(k, options)));
    }

    /** The lock manager's key of {@code lockKey}. */
    public String keyOf(Object lockKey) {
        return prefix + Objects.requireNonNull(lockKey, "lockKey");
    }

    /** Forgets the locks nobody holds or waits for that were last used longer than {@code age} ms ago. */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.nanoTime();
        locks.values()
                .removeIf(lock -> lock.unusedFor(now) > Duration.ofMillis(age).toNanos());
    }

    /** Renews the calling thread's lock of {@code lockKey} for its lease, counted from now. */
    @Override
    public void renewLock(Object lockKey) {
        heldByThisThread(lockKey).renew(null);
    }

    /** Renews the calling thread's lock of {@code lockKey} for {@code ttl}, counted from now. */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        heldByThisThread(lockKey).renew(Objects.requireNonNull(ttl, "ttl"));
    }

    private RegistryLock heldByThisThread(Object lockKey) {
        RegistryLock lock = locks.get(keyOf(lockKey));
        if (lock == null || !lock.isHeldByCurrentThread()) {
            throw new IllegalStateException("the lock of [" + lockKey + "] is not held by this thread");
        }
        return lock;
    }

    @Override
    public String toString() {
        return "LockManagerLockRegistry[" + prefix + "*]";
    }
}
