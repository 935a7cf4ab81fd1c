package org.eslm.rest;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParseException;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.core.BridgeJson;

/**
 * The lock requests' bodies, handed to the core as the client sent them: the core checks every
 * field and answers the arguments of its op, or the refusal to render (rust/lock-jni
 * {@code ops/requests}, docs/ARCHITECTURE.md "The path of one request"). Java only reads a body with
 * Elasticsearch's tokenizer, so every content type works and a body that is not JSON, or a value
 * that cannot be read, is refused as Elasticsearch refuses one, naming the field; and it routes
 * what the core answers ({@link LockOpRequest#fromBody}).
 */
public final class RequestBodies {
    /** One {@link NativeOp#READ_REQUEST} call: its arguments as JSON text, its result. */
    private final Function<String, Map<String, Object>> core;

    public RequestBodies(Function<String, Map<String, Object>> core) {
        this.core = core;
    }

    /** The request {@code op} of {@code kind}, its body read from {@code body}, for the path's {@code key}. */
    public LockOpRequest request(NativeOp op, NativeRequest kind, String key, XContentParser body) throws IOException {
        return LockOpRequest.fromBody(op, read(kind, key, null, object(kind, body)));
    }

    /** {@link #request} of a body given as a map (a caller inside the node, {@code org.eslm.api.PluginLocks}). */
    public LockOpRequest request(NativeOp op, NativeRequest kind, String key, Map<String, ?> body) {
        return LockOpRequest.fromBody(op, read(kind, key, null, body));
    }

    /** A session's keep-alive or end: the session of the path, its owner in {@code body}. */
    LockOpRequest sessionRequest(NativeOp op, NativeRequest kind, String session, XContentParser body)
            throws IOException {
        Map<String, Object> parsed = read(kind, null, session, object(kind, body));
        // Routed by the partition its id names (PartitionRouter), not by a routing value.
        return LockOpRequest.of(op, "", BridgeJson.object(BridgeField.ARGS.in(parsed)));
    }

    /** The core's arguments of {@code body}, for a request routed by its caller (a group's update). */
    Map<String, Object> args(NativeRequest kind, String key, XContentParser body) throws IOException {
        return BridgeJson.object(BridgeField.ARGS.in(read(kind, key, null, object(kind, body))));
    }

    /**
     * The core's arguments of the query parameters {@code names} of {@code request}, read as a
     * body of {@code kind} (a watch's, a long poll's): any refusal is an illegal argument, the
     * parameters being no document.
     */
    Map<String, Object> params(NativeRequest kind, String key, RestRequest request, String... names) {
        Map<String, Object> params = new LinkedHashMap<>();
        for (String name : names) {
            if (request.hasParam(name)) {
                params.put(name, request.param(name));
            }
        }
        try {
            return BridgeJson.object(BridgeField.ARGS.in(read(kind, key, null, params)));
        } catch (XContentParseException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /**
     * What the core makes of a body: {@code {"args", "routing"?}}.
     *
     * @throws XContentParseException   for a field of a JSON type it never takes, an unknown field
     * @throws IllegalArgumentException for a bad value, named
     */
    private Map<String, Object> read(NativeRequest kind, String key, String session, Map<String, ?> body) {
        Map<String, Object> call = new LinkedHashMap<>();
        BridgeField.REQUEST.put(call, kind.bodyName());
        if (key != null) {
            BridgeField.KEY.put(call, key);
        }
        if (session != null) {
            BridgeField.SESSION.put(call, session);
        }
        BridgeField.BODY.put(call, body);
        Map<String, Object> answer = core.apply(BridgeJson.toJson(call));
        if (BridgeField.REFUSED.in(answer) instanceof Map<?, ?> refusal) {
            String message = String.valueOf(BridgeField.MESSAGE.in(refusal));
            throw Boolean.TRUE.equals(BridgeField.PARSE.in(refusal))
                    ? new XContentParseException(message)
                    : new IllegalArgumentException(message);
        }
        return BridgeJson.object(BridgeField.PARSED.in(answer));
    }

    /**
     * A body as one value, each field's value read whole: a value the tokenizer cannot read (bad
     * UTF-8, a document that ends early inside it) fails naming its field, as Elasticsearch's own
     * parsers do; a body that is not an object fails naming the request.
     */
    static Map<String, Object> object(NativeRequest kind, XContentParser parser) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        if (parser == null) {
            return body;
        }
        XContentParser.Token token = parser.currentToken() == null ? parser.nextToken() : parser.currentToken();
        if (token != XContentParser.Token.START_OBJECT) {
            throw new XContentParseException(
                    parser.getTokenLocation(), "[" + kind.bodyName() + "] Expected START_OBJECT but was: " + token);
        }
        while (parser.nextToken() != XContentParser.Token.END_OBJECT) {
            String field = parser.currentName();
            parser.nextToken();
            try {
                body.put(field, value(parser));
            } catch (IOException | RuntimeException e) {
                throw new XContentParseException(
                        parser.getTokenLocation(),
                        "[" + kind.bodyName() + "] failed to parse field [" + field + "]",
                        e);
            }
        }
        return body;
    }

    private static Object value(XContentParser parser) throws IOException {
        return switch (parser.currentToken()) {
            case START_OBJECT -> parser.mapOrdered();
            case START_ARRAY -> parser.listOrderedMap();
            case VALUE_STRING -> parser.text();
            case VALUE_NUMBER -> parser.numberValue();
            case VALUE_BOOLEAN -> parser.booleanValue();
            case VALUE_NULL -> null;
            default -> parser.objectText();
        };
    }
}
