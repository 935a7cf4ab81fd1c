package org.eslm.bridge;

/**
 * The core's limits that the plugin checks as it parses a request, so that a body over one is
 * refused with the field named before it is routed (docs/API.md "Errors"). Defined in Rust
 * ({@code lock_core}), emitted into the C header as {@code ESLM_<NAME>}, and held to it by
 * {@code BridgeVocabularyTest}: the numbers are written here, never chosen here.
 */
public final class NativeLimits {
    private NativeLimits() {}

    /** The longest key, in UTF-8 bytes. */
    public static final int MAX_KEY_BYTES = 512;
    /** The longest owner, in UTF-8 bytes. */
    public static final int MAX_OWNER_BYTES = 512;
    /** The largest semaphore {@code limit} and {@code permits}. */
    public static final int MAX_SEMAPHORE_LIMIT = 65_535;
    /** The longest lock-delay, in milliseconds. */
    public static final int MAX_LOCK_DELAY_MS = 60_000;
    /** The longest election value or group member's capabilities, in bytes. */
    public static final int MAX_VALUE_BYTES = 1024;
    /** A listing's page size when none is asked for. */
    public static final int LIST_DEFAULT_SIZE = 100;
    /** The largest page a listing may ask for. */
    public static final int LIST_MAX_SIZE = 1000;
}
