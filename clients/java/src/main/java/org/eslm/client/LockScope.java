package org.eslm.client;

/**
 * docs/API.md, "Scopes": {@code KEY} locks exactly the key; {@code TREE} treats it as an absolute
 * path ({@code /orders/eu/42}) and takes intention locks on its ancestors. The two are separate
 * namespaces; a {@link HeldLock} remembers its scope for renew and release. {@code SEMAPHORE} is the
 * scope of a semaphore's grant ({@link Semaphore}, docs/API.md "Semaphores"), a name space of its own;
 * {@code ELECTION} that of a leadership ({@link Election}, docs/API.md "Elections").
 */
public enum LockScope {
    KEY,
    TREE,
    SEMAPHORE,
    ELECTION
}
