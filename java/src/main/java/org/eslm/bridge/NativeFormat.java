package org.eslm.bridge;

import java.util.Map;

/**
 * The format of the state documents the core writes and reads — replication batches, a copy's
 * catch-up state, a hand-over snapshot, the records of the state log (docs/ARCHITECTURE.md
 * "Formats and versions"). Defined in Rust ({@code lock_core::STATE_FORMAT}), emitted into the C
 * header as {@code ESLM_STATE_FORMAT} / {@code ESLM_OLDEST_STATE_FORMAT}, and held to it by
 * {@code BridgeVocabularyTest}.
 */
public final class NativeFormat {
    /** The format this build's core writes, and the newest it reads. */
    public static final int STATE_FORMAT = 5;
    /** The oldest format this build's core reads: format 1, documents without a {@code format} member. */
    public static final int OLDEST_STATE_FORMAT = 1;
    /**
     * The first format whose readers keep a lock's acquisition (docs/API.md "Acquisitions"): a node
     * that reads an older one is sent no acquisition id.
     */
    public static final int ACQUISITION_STATE_FORMAT = 4;
    /** The first format whose readers keep groups (docs/API.md "Groups"): an older owner is sent no group request. */
    public static final int GROUPS_STATE_FORMAT = 5;

    private NativeFormat() {}

    /** The arguments that ask the core to write a state document in {@code format}. */
    public static Map<String, Object> writeArgs(int format) {
        return BridgeField.FORMAT.of(format);
    }

    /**
     * The arguments of {@link NativeOp#TAKE_BATCH}: the next replication batch in {@code format},
     * the whole state with {@code full}, else the changes since the previous take.
     */
    public static Map<String, Object> batchArgs(int format, boolean full) {
        Map<String, Object> args = writeArgs(format);
        BridgeField.FULL.put(args, full);
        return args;
    }
}
