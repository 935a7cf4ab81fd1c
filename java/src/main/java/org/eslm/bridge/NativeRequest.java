package org.eslm.bridge;

import java.util.Locale;

/**
 * The requests whose bodies the core reads ({@link NativeOp#READ_REQUEST}): rust/lock-jni's
 * {@code ops::requests::schema::RequestKind}, emitted into {@code rust/lock-jni/include/eslm.h} as
 * {@code ESLM_REQUEST_<NAME>}; {@code BridgeVocabularyTest} holds this list to the header. Each
 * names its body {@code <name in lower case>_request}, as the core's refusals do. The last three
 * are query parameters, read as a body is.
 */
public enum NativeRequest {
    LOCK_ACQUIRE,
    LOCK_MULTI_ACQUIRE,
    LOCK_RELEASE,
    LOCK_MULTI_RELEASE,
    LOCK_RENEW,
    LOCK_DOWNGRADE,
    LOCK_SESSION,
    LOCK_SESSION_KEEPALIVE,
    LOCK_SESSION_END,
    LOCK_FORCE_RELEASE,
    SEMAPHORE_ACQUIRE,
    SEMAPHORE_RELEASE,
    SEMAPHORE_RENEW,
    SEMAPHORE_LIMIT,
    ELECTION_CAMPAIGN,
    ELECTION_RESIGN,
    ELECTION_RENEW,
    GROUP_JOIN,
    GROUP_LEAVE,
    GROUP_HEARTBEAT,
    GROUP_UPDATE,
    LOCK_WATCH,
    ELECTION_OBSERVE,
    GROUP_OBSERVE;

    private final String bodyName = name().toLowerCase(Locale.ROOT) + "_request";

    /** The body's name, as the core names it in refusals ({@code lock_acquire_request}). */
    public String bodyName() {
        return bodyName;
    }
}
