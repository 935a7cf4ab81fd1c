package org.eslm.bridge;

/**
 * Operation codes of {@code LockNative.call}. The numbers are defined once, by {@code ops::Op} in
 * rust/lock-jni, and emitted as {@code ESLM_OP_*} into rust/lock-jni/include/eslm.h;
 * BridgeVocabularyTest fails when this enum disagrees with the header. They travel on the wire
 * by number, never by declaration order.
 */
public enum NativeOp {
    ACQUIRE(1),
    RELEASE(2),
    RENEW(3),
    ACQUIRE_MANY(4),
    RELEASE_MANY(5),
    CANCEL(6),
    SESSION_CREATE(7),
    SESSION_KEEPALIVE(8),
    SESSION_END(9),
    KEY_INFO(10),
    LIST(11),
    STATS(12),
    DIAGNOSTICS(13),
    FORCE_RELEASE(14),
    TICK(15),
    CONFIGURE(16),
    DOWNGRADE(17),
    OPEN_PARTITION(18),
    CLOSE_PARTITION(19),
    TAKE_BATCH(20),
    EXPORT_FULL(21),
    STANDBY_APPLY(22),
    STANDBY_EXPORT(23),
    WATCH(24),
    ELECTION_VIEW(25),
    SEMAPHORE_LIMIT(26),
    PEERS_READ(27),
    AUDIT_DRAIN(28),
    GROUP_CREATE(29),
    GROUP_DELETE(30),
    GROUP_LIST(31),
    GROUP_INFO(32),
    GROUP_UPDATE(33),
    READ_REQUEST(34),
    OWNERSHIP(35),
    FENCE(36),
    TELEMETRY(37);

    private final int code;

    NativeOp(int code) {
        this.code = code;
    }

    /** The op's stable number: what crosses the bridge and the transport wire (never the declaration order). */
    public int code() {
        return code;
    }

    /**
     * The op numbered {@code code}.
     *
     * @throws IllegalArgumentException for a number no op has (a newer node's op, or a corrupt stream)
     */
    public static NativeOp fromCode(int code) {
        for (NativeOp op : values()) {
            if (op.code == code) {
                return op;
            }
        }
        throw new IllegalArgumentException("unknown lock op number [" + code + "]");
    }
}
