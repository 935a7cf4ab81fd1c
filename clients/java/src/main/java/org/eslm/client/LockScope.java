package org.eslm.client;

/**
 * docs/API.md, "Scopes": {@code KEY} locks exactly the key; {@code TREE} treats it as an absolute
 * path ({@code /orders/eu/42}) and takes intention locks on its ancestors. The two are separate
 * namespaces; a {@link HeldLock} remembers its scope for renew and release.
 */
public enum LockScope {
    KEY,
    TREE;

    /** The name on the wire: {@code key} or {@code tree}. */
    public String wire() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    static LockScope fromWire(String name) {
        return valueOf(name.toUpperCase(java.util.Locale.ROOT));
    }
}
