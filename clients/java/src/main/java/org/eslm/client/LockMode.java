package org.eslm.client;

/** docs/API.md, "Modes": one exclusive holder, or any number of shared holders. */
public enum LockMode {
    EXCLUSIVE,
    SHARED;

    /** The name on the wire: {@code exclusive} or {@code shared}. */
    public String wire() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    static LockMode fromWire(String name) {
        return valueOf(name.toUpperCase(java.util.Locale.ROOT));
    }
}
