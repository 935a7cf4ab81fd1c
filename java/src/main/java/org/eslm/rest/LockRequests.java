package org.eslm.rest;

import java.io.IOException;
import java.util.Map;
import org.elasticsearch.common.Strings;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.xcontent.XContentParserConfiguration;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.eslm.action.LockOpRequest;
import org.eslm.bridge.NativeOp;
import org.eslm.settings.LockSettings;

/**
 * Lock requests built from the JSON bodies docs/API.md documents, for callers inside the node
 * ({@link org.eslm.api.PluginLocks}). They go through the very parsers the REST endpoints use,
 * so a request from another plugin gets the same defaults, bounds and errors as one over HTTP.
 */
public final class LockRequests {
    private LockRequests() {}

    /** {@code POST /_locks/{key}/_acquire} with {@code body}. */
    public static LockOpRequest acquire(String key, Map<String, ?> body, LockSettings.Values settings)
            throws IOException {
        try (XContentParser parser = parser(body)) {
            return request(NativeOp.ACQUIRE, LockBodies.acquire(key, parser, settings));
        }
    }

    /** {@code POST /_locks/{key}/_renew} with {@code body}. */
    public static LockOpRequest renew(String key, Map<String, ?> body, LockSettings.Values settings)
            throws IOException {
        try (XContentParser parser = parser(body)) {
            return request(NativeOp.RENEW, LockBodies.keyed(LockBodies.RENEW, key, parser, settings));
        }
    }

    /** {@code POST /_locks/{key}/_release} with {@code body}. */
    public static LockOpRequest release(String key, Map<String, ?> body, LockSettings.Values settings)
            throws IOException {
        try (XContentParser parser = parser(body)) {
            return request(NativeOp.RELEASE, LockBodies.keyed(LockBodies.RELEASE, key, parser, settings));
        }
    }

    private static LockOpRequest request(NativeOp op, LockBodies.Args args) {
        return LockOpRequest.of(op, LockBodies.routingValue(args), args);
    }

    private static XContentParser parser(Map<String, ?> body) throws IOException {
        String json = Strings.toString(JsonXContent.contentBuilder().map(body));
        return JsonXContent.jsonXContent.createParser(XContentParserConfiguration.EMPTY, json);
    }
}
