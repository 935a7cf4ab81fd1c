package org.eslm.bridge;

/**
 * The bounds of the ownership protocol (docs/ARCHITECTURE.md "Silent owners"), in milliseconds
 * unless named otherwise: defined in Rust ({@code lock_core::ownership::bounds}, the one place they
 * are written), emitted into the C header as {@code ESLM_BOUND_<NAME>}, and held to it by
 * {@code BridgeVocabularyTest}: the numbers are written here, never chosen here. The core decides
 * with them; the plugin uses them for its timers and its settings' defaults and floors.
 */
public final class NativeBounds {
    private NativeBounds() {}

    /** How long an owner may serve after the send of a batch every in-sync copy acknowledged. */
    public static final long COPY_LEASE_MS = 800;
    /** How often an owner with nothing to replicate sends its copies a heartbeat. */
    public static final long HEARTBEAT_INTERVAL_MS = 200;
    /** How long the elected master's confirmation stays good where copies renew no lease. */
    public static final long OWNERSHIP_WINDOW_MS = 3_000;
    /** How often an owner asks the elected master to confirm it. */
    public static final long OWNER_CHECK_INTERVAL_MS = 500;
    /** The allowed rate error between two nodes' clocks, in parts per million. */
    public static final long CLOCK_RATE_ERROR_PPM = 10_000;
    /** How often the elected master looks for silent owners. */
    public static final long SILENT_LOOK_INTERVAL_MS = 250;
    /** A gap between two of the master's looks past which its silences start again. */
    public static final long OWN_PAUSE_MS = 1_000;
    /** How often a condemned primary's failure is asked again. */
    public static final long ASK_AGAIN_MS = 5_000;
    /** The default of {@code locks.failover.silent_owner}. */
    public static final long SILENT_OWNER_FAILOVER_DEFAULT_MS = 3_500;
    /** The floor of {@code locks.failover.silent_owner}. */
    public static final long SILENT_OWNER_FAILOVER_MIN_MS = 3_100;
    /** How long a promoted copy waits after its last answer before it serves. */
    public static final long PROMOTION_WAIT_MS = 817;
    /** How long a copy that has the whole state may take to answer a batch. */
    public static final long SYNCED_COPY_WAIT_MS = 1_200;
    /** What {@link #SYNCED_COPY_WAIT_MS} grows by for each megabyte of batch. */
    public static final long SYNCED_COPY_MS_PER_MB = 100;
    /** How long a copy that may first have to catch up may take to answer a batch. */
    public static final long CATCHING_UP_COPY_WAIT_MS = 5_000;
    /** How long a promoted copy's request that a live old owner close may take. */
    public static final long CLOSE_REQUEST_TIMEOUT_MS = 500;
}
