package org.eslm.bridge;

/**
 * A lock outcome reported by the Rust core (conflict, not held, ...), thrown by the JNI wrapper.
 *
 * <p>{@link #code()} is the core's stable {@code ErrorCode}; {@link #detailsJson()} holds the
 * structured details (holders of a conflicting key, the field of an invalid argument).
 */
public final class NativeLockException extends RuntimeException {
    /*
     * Values of lock_core::ErrorCode, emitted as LM_STATUS_* into rust/lock-jni/include/eslm.h;
     * BridgeVocabularyTest fails when these disagree with the header. Never renumbered.
     */
    public static final int INVALID_ARGUMENT = 1;
    public static final int CONFLICT = 2;
    public static final int NOT_HELD = 3;
    public static final int WAIT_TIMEOUT = 4;
    public static final int DEADLOCK = 5;
    public static final int SESSION_NOT_FOUND = 6;
    public static final int LIMIT_EXCEEDED = 7;
    public static final int PARTITION_UNAVAILABLE = 8;
    public static final int CANCELLED = 9;
    public static final int CORE_PANIC = 10;
    public static final int SEMAPHORE_LIMIT_MISMATCH = 11;
    public static final int GROUP_NOT_FOUND = 12;
    public static final int GROUP_EXISTS = 13;
    public static final int GROUP_NOT_EMPTY = 14;
    public static final int MEMBER_EXISTS = 15;
    public static final int INTERNAL = 99;

    private static final long serialVersionUID = 1L;

    private final int code;
    private final String detailsJson;

    /** Called from Rust with the outcome's code, message and details. */
    public NativeLockException(int code, String message, String detailsJson) {
        super(message);
        this.code = code;
        this.detailsJson = detailsJson;
    }

    public int code() {
        return code;
    }

    public String detailsJson() {
        return detailsJson;
    }
}
