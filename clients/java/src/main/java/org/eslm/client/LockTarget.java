package org.eslm.client;

import java.util.Objects;

/** One lock of a multi-lock ({@link LockClient#acquireAll}): a key, its mode and scope. */
public record LockTarget(String key, LockMode mode, LockScope scope) {
    public LockTarget {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(scope, "scope");
    }

    /** An exclusive lock of exactly {@code key}. */
    public static LockTarget of(String key) {
        return new LockTarget(key, LockMode.EXCLUSIVE, LockScope.KEY);
    }

    public LockTarget shared() {
        return new LockTarget(key, LockMode.SHARED, scope);
    }

    public LockTarget tree() {
        return new LockTarget(key, mode, LockScope.TREE);
    }
}
