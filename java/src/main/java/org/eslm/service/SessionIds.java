package org.eslm.service;

import org.eslm.core.SessionNotFoundException;

/**
 * Session ids as clients see them: {@code <partition>_<core id>}, the core id being 32 lowercase
 * hex digits (128 random bits the bridge draws from the OS, see rust/lock-core/src/types.rs
 * {@code SessionId}). A session lives in one partition; naming it in the id lets any node route
 * keep-alives, ends and acquires to it.
 *
 * <p>Parsing is strict: the partition in canonical decimal (no sign, no leading zero), one
 * {@code _}, exactly 32 lowercase hex digits. Anything else names no session and answers as an
 * unknown one ({@link SessionNotFoundException}), so no spelling other than the issued one reaches
 * a session.
 */
public final class SessionIds {
    /** Hex digits of the core's id. */
    static final int CORE_ID_DIGITS = 32;
    /** Largest partition number accepted in an id (Elasticsearch's own shard count limit is lower). */
    private static final int MAX_PARTITION_DIGITS = 4;

    private SessionIds() {}

    public static String global(int partition, String localId) {
        return partition + "_" + localId;
    }

    /** @throws SessionNotFoundException when {@code id} is not of the form {@code <partition>_<32 hex digits>} */
    public static int partition(String id) {
        int sep = id.indexOf('_');
        if (sep < 1 || sep > MAX_PARTITION_DIGITS || id.length() != sep + 1 + CORE_ID_DIGITS) {
            throw notFound(id);
        }
        if (sep > 1 && id.charAt(0) == '0') {
            throw notFound(id);
        }
        int partition = 0;
        for (int i = 0; i < sep; i++) {
            char c = id.charAt(i);
            if (c < '0' || c > '9') {
                throw notFound(id);
            }
            partition = partition * 10 + (c - '0');
        }
        for (int i = sep + 1; i < id.length(); i++) {
            char c = id.charAt(i);
            if ((c < '0' || c > '9') && (c < 'a' || c > 'f')) {
                throw notFound(id);
            }
        }
        return partition;
    }

    /** The core's id of a client's session id. @throws SessionNotFoundException as {@link #partition} */
    public static String local(String id) {
        partition(id);
        return id.substring(id.indexOf('_') + 1);
    }

    private static SessionNotFoundException notFound(String id) {
        return new SessionNotFoundException("session [" + id + "] does not exist or has expired", id);
    }
}
