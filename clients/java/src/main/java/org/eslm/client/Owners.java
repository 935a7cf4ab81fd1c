package org.eslm.client;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Who each acquisition of a {@link LockClient} is made for. Locks belong to owners, and the same
 * owner acquiring a key again gets its grant back (docs/API.md: a retry is reentrant), so an owner
 * shared by two threads lets both into one critical section. Hence the default: every acquisition
 * gets an owner of its own, and reentrancy is something a caller asks for:
 *
 * <ul>
 *   <li>{@link Kind#EACH_ACQUISITION}: {@code <name>/<n>}, n counting acquisitions in this JVM
 *       (name is {@code <host>/<pid>/<random>}, distinct per built client);
 *   <li>{@link Kind#EACH_THREAD}: {@code <name>/thread-<n>}, one per calling thread, so nested
 *       acquires on one thread are reentrant and other threads are excluded;
 *   <li>{@link Kind#SHARED}: {@code name} itself for every acquisition: reentrant for all callers.
 * </ul>
 *
 * @param name the owner (shared) or the prefix of the owners made
 */
record Owners(Kind kind, String name) {
    enum Kind {
        EACH_ACQUISITION,
        EACH_THREAD,
        SHARED
    }

    /** Numbers across every client of the JVM: the name prefix already tells clients apart. */
    private static final AtomicLong ACQUISITIONS = new AtomicLong();

    private static final AtomicLong THREADS = new AtomicLong();

    /** A number per thread, never reused (thread ids may be, once a thread has ended). */
    private static final ThreadLocal<Long> THREAD = ThreadLocal.withInitial(THREADS::incrementAndGet);

    Owners {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("[owner] must not be empty");
        }
    }

    /** The owner of the next acquisition. */
    String next() {
        return switch (kind) {
            case EACH_ACQUISITION -> name + "/" + ACQUISITIONS.incrementAndGet();
            case EACH_THREAD -> name + "/thread-" + THREAD.get();
            case SHARED -> name;
        };
    }
}
