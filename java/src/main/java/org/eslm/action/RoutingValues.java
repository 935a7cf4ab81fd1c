package org.eslm.action;

/** The value a lock request is routed by (hashed like a document id to pick the partition). */
public final class RoutingValues {
    private RoutingValues() {}

    /**
     * An explicit {@code routing} wins; a tree lock routes by its tree (the path's first
     * segment, so a whole tree lives in one partition); any other key routes by itself.
     */
    public static String of(String key, String scope, String routing) {
        if (routing != null) {
            return routing;
        }
        if ("tree".equals(scope) && key != null && key.startsWith("/")) {
            int end = key.indexOf('/', 1);
            return end < 0 ? key : key.substring(0, end);
        }
        return key;
    }
}
