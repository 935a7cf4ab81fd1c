package org.eslm.bridge;

import org.apache.logging.log4j.Level;

/**
 * The level of a native log line ({@link LockNative#log}). The numbers are defined once, by
 * {@code logging::LogLevel} in rust/lock-jni, and emitted as {@code ESLM_LOG_LEVEL_*} into
 * rust/lock-jni/include/eslm.h; BridgeVocabularyTest fails when this enum disagrees with the header.
 */
enum NativeLogLevel {
    ERROR(0, Level.ERROR),
    WARN(1, Level.WARN),
    INFO(2, Level.INFO),
    DEBUG(3, Level.DEBUG),
    TRACE(4, Level.TRACE);

    private final int code;
    private final Level level;

    NativeLogLevel(int code, Level level) {
        this.code = code;
        this.level = level;
    }

    int code() {
        return code;
    }

    /** The log4j level of the line numbered {@code code}; a number from a newer core logs at TRACE. */
    static Level log4j(int code) {
        for (NativeLogLevel l : values()) {
            if (l.code == code) {
                return l.level;
            }
        }
        return Level.TRACE;
    }
}
