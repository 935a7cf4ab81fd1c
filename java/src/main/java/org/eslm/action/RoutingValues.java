package org.eslm.action;

/**
 * The value a lock routes by (hashed like a document id to pick its partition). It follows from
 * the key alone, so one key always lives in one partition and can never have two exclusive
 * holders in two partitions (docs/API.md "Partitions and hash tags").
 *
 * <p>Keys that must be locked together (a multi-lock, a session's locks) share a partition by
 * sharing a <em>hash tag</em>, as in Redis Cluster: the text between the first {@code {} and the
 * first {@code }} after it, when that text is not empty. A tree lock routes by its tree (the
 * path's first segment, or that segment's hash tag), so a whole tree lives in one partition.
 */
public final class RoutingValues {
    private RoutingValues() {}

    /** The routing value of {@code key} locked with {@code scope} ({@code null} means {@code key}). */
    public static String of(String key, String scope) {
        if ("tree".equals(scope) && key != null && key.startsWith("/")) {
            int end = key.indexOf('/', 1);
            return hashTag(end < 0 ? key : key.substring(0, end));
        }
        return key == null ? null : hashTag(key);
    }

    /** The hash tag of {@code s}, or {@code s} itself when it has none. */
    static String hashTag(String s) {
        int open = s.indexOf('{');
        if (open >= 0) {
            int close = s.indexOf('}', open + 1);
            if (close > open + 1) {
                return s.substring(open + 1, close);
            }
        }
        return s;
    }

    /** What a client that names {@code routing} on a lock request is told. */
    public static IllegalArgumentException routingRefused() {
        return new IllegalArgumentException(
                "[routing] is not accepted on a lock: a lock's partition follows from its key;"
                        + " give keys locked together a common hash tag, e.g. [{order-42}items] and [{order-42}payment]");
    }
}
