package org.eslm.service;

/**
 * Session ids as clients see them: {@code <partition>_<core id>}. A session lives in one
 * partition; naming it in the id lets any node route keep-alives, ends and acquires to it.
 */
public final class SessionIds {
    private SessionIds() {}

    public static String global(int partition, String localId) {
        return partition + "_" + localId;
    }

    /** @throws SessionNotFoundException when {@code id} is not of the form {@code <partition>_<id>} */
    public static int partition(String id) {
        int sep = id.indexOf('_');
        try {
            int partition = sep > 0 ? Integer.parseInt(id.substring(0, sep)) : -1;
            if (partition >= 0 && sep < id.length() - 1) {
                return partition;
            }
        } catch (NumberFormatException e) {
            // falls through
        }
        throw new SessionNotFoundException("session [" + id + "] not found", id);
    }

    public static String local(String id) {
        partition(id);
        return id.substring(id.indexOf('_') + 1);
    }
}
