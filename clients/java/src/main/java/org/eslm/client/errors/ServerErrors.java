package org.eslm.client.errors;

import java.util.Map;

/** Maps an error answer to the exception class of its {@code error.type} (docs/API.md, "Errors"). */
public final class ServerErrors {
    private ServerErrors() {}

    @FunctionalInterface
    private interface Factory {
        LockException create(int status, String reason, Map<String, Object> details);
    }

    /** One entry per row of docs/API.md's Errors table (ServerErrorsTest holds them together). */
    private static final Map<String, Factory> BY_TYPE = Map.ofEntries(
            Map.entry(BodyParseException.TYPE, BodyParseException::new),
            Map.entry(TruncatedBodyException.TYPE, TruncatedBodyException::new),
            Map.entry(InvalidLockRequestException.TYPE, InvalidLockRequestException::new),
            Map.entry(LockNotHeldException.TYPE, LockNotHeldException::new),
            Map.entry(SessionNotFoundException.TYPE, SessionNotFoundException::new),
            Map.entry(LockConflictException.TYPE, LockConflictException::new),
            Map.entry(LockWaitTimeoutException.TYPE, LockWaitTimeoutException::new),
            Map.entry(DeadlockException.TYPE, DeadlockException::new),
            Map.entry(SemaphoreLimitMismatchException.TYPE, SemaphoreLimitMismatchException::new),
            Map.entry(GroupNotFoundException.TYPE, GroupNotFoundException::new),
            Map.entry(GroupAlreadyExistsException.TYPE, GroupAlreadyExistsException::new),
            Map.entry(GroupNotEmptyException.TYPE, GroupNotEmptyException::new),
            Map.entry(MemberAlreadyJoinedException.TYPE, MemberAlreadyJoinedException::new),
            Map.entry(BodyTooLargeException.TYPE, BodyTooLargeException::new),
            Map.entry(LockLimitExceededException.TYPE, LockLimitExceededException::new),
            Map.entry(LockCorePanicException.TYPE, LockCorePanicException::new),
            Map.entry(PartitionUnavailableException.TYPE, PartitionUnavailableException::new));

    /** The exception for an error answer; a type this client does not know gets the base class. */
    public static LockException of(int status, String type, String reason, Map<String, Object> details) {
        Factory factory = BY_TYPE.get(type);
        return factory == null
                ? new LockException(status, type, reason, details)
                : factory.create(status, reason, details);
    }

    /** Whether this client has a class of its own for {@code type}. */
    public static boolean knows(String type) {
        return BY_TYPE.containsKey(type);
    }
}
