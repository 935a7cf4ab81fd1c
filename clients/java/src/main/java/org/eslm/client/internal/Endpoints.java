package org.eslm.client.internal;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/** The lock manager's REST paths (docs/API.md). Keys and ids go in the path, URL-encoded. */
public final class Endpoints {
    public static final String MULTI_ACQUIRE = "/_locks/_acquire";
    public static final String MULTI_RELEASE = "/_locks/_release";
    public static final String SESSIONS = "/_locks/_session";

    private Endpoints() {}

    public static String acquire(String key) {
        return lock(key) + "/_acquire";
    }

    public static String release(String key) {
        return lock(key) + "/_release";
    }

    public static String renew(String key) {
        return lock(key) + "/_renew";
    }

    /** {@code /_locks/{key}/_watch?token=..&wait=..ms&scope=..} (docs/API.md "Watch a lock"). */
    public static String watch(String key, String scope, long token, long waitMs) {
        return lock(key) + "/_watch?token=" + token + "&wait=" + waitMs + "ms&scope=" + scope;
    }

    public static String keepAlive(String sessionId) {
        return session(sessionId) + "/_keepalive";
    }

    public static String session(String sessionId) {
        return SESSIONS + "/" + encode(sessionId);
    }

    /** {@code /_semaphores/{name}} (docs/API.md "Semaphores"). */
    public static String semaphore(String name) {
        return "/_semaphores/" + encode(name);
    }

    /** {@code /_elections/{name}} (docs/API.md "Elections"). */
    public static String election(String name) {
        return "/_elections/" + encode(name);
    }

    /** {@code /_elections/{name}/_observe?term=..&wait=..ms}: answers when the term is not {@code term}. */
    public static String observe(String name, long term, long waitMs) {
        return election(name) + "/_observe?term=" + term + "&wait=" + waitMs + "ms";
    }

    /** {@code /_groups/{name}} (docs/API.md "Groups"). */
    public static String group(String name) {
        return "/_groups/" + encode(name);
    }

    /** {@code /_groups/{name}/_observe?version=..&wait=..ms}: answers when the version is not {@code version}. */
    public static String groupObserve(String name, long version, long waitMs) {
        return group(name) + "/_observe?version=" + version + "&wait=" + waitMs + "ms";
    }

    /** {@code /_locks/{key}}: keys may hold {@code /} (tree paths), sent as {@code %2F}. */
    public static String lock(String key) {
        return "/_locks/" + encode(key);
    }

    /** {@code /{index}/_doc/{id}}: a document of the application's own, beside the locks. */
    public static String document(String index, String id) {
        return "/" + encode(index) + "/_doc/" + encode(id);
    }

    /** {@code /{index}/_update/{id}}: a fenced change of a document (docs/API.md "Fenced changes"). */
    public static String update(String index, String id) {
        return "/" + encode(index) + "/_update/" + encode(id);
    }

    /** Percent-encoding for a path segment: URLEncoder's form encoding, with a space as %20. */
    static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
