package org.eslm.rest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.rest.action.RestCancellableNodeClient;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.action.LockOpResponse;
import org.eslm.action.RoutingValues;
import org.eslm.action.TransportGetLockAction;
import org.eslm.action.TransportWatchLockAction;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLimits;
import org.eslm.bridge.NativeOp;
import org.eslm.settings.LockSettings;

/** Base of the lock endpoints: body handling and dispatch to the transport actions. */
abstract class LockRestHandler extends BaseRestHandler {

    /**
     * A parser over the request body.
     *
     * @throws IllegalArgumentException when there is no body, since every mutating lock call needs {@code owner}
     */
    protected static XContentParser requiredParser(RestRequest request) throws IOException {
        if (request.hasContent() == false) {
            throw new IllegalArgumentException("request body is required: at least [owner]");
        }
        return request.contentParser();
    }

    /**
     * {@link #requiredParser(RestRequest)}, refusing first, before anything is parsed, a body
     * longer than the limits allow ({@link LockSettings.Values#maxBodyBytes}): 413 like
     * Elasticsearch's own answer to a body over {@code http.max_content_length}.
     */
    protected static XContentParser requiredParser(RestRequest request, LockSettings.Values settings)
            throws IOException {
        checkBodyLength(request.hasContent() ? request.content().length() : 0, settings);
        return requiredParser(request);
    }

    /** @throws ElasticsearchStatusException 413 when {@code length} exceeds the bound */
    static void checkBodyLength(long length, LockSettings.Values settings) {
        long max = settings.maxBodyBytes();
        if (length > max) {
            throw new ElasticsearchStatusException(
                    "request body is too large: [" + length + "] bytes, at most [" + max + "] for ["
                            + LockSettings.MAX_KEYS_PER_REQUEST.getKey() + "] = " + settings.maxKeysPerRequest()
                            + " keys",
                    RestStatus.REQUEST_ENTITY_TOO_LARGE);
        }
    }

    /**
     * A name from the path that is a key (an election's, a group's), no longer than the core's
     * keys ({@link NativeLimits#MAX_KEY_BYTES}): checked here, before it is routed by.
     */
    static String pathName(String field, String value) {
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > NativeLimits.MAX_KEY_BYTES) {
            throw new IllegalArgumentException("[" + field + "] must be at most " + NativeLimits.MAX_KEY_BYTES
                    + " bytes (UTF-8), got [" + bytes + "]");
        }
        return value;
    }

    /** Sends one operation, built from a parsed body ({@link LockOpRequest#of}), to its transport action. */
    protected static RestChannelConsumer send(
            RestRequest request,
            NodeClient client,
            ActionType<LockOpResponse> action,
            NativeOp op,
            String routingValue,
            Map<String, ?> args) {
        return send(request, client, action, LockOpRequest.of(op, routingValue, args));
    }

    /**
     * {@code GET} of one key's holders and waiters in {@code scope}, routed by the key alone (a
     * {@code routing} parameter is refused, as for every key endpoint).
     */
    protected static RestChannelConsumer keyInfo(RestRequest request, NodeClient client, String key, String scope) {
        if (request.hasParam("routing")) {
            throw RoutingValues.routingRefused();
        }
        Map<String, Object> args = new LinkedHashMap<>();
        BridgeField.KEY.put(args, key);
        BridgeField.SCOPE.put(args, scope);
        return send(
                request, client, TransportGetLockAction.TYPE, NativeOp.KEY_INFO, RoutingValues.of(key, scope), args);
    }

    /**
     * Sends one operation to its transport action. Requests that may wait go through
     * {@link RestCancellableNodeClient}, so a client that disconnects cancels its waiter.
     */
    protected static RestChannelConsumer send(
            RestRequest request, NodeClient client, ActionType<LockOpResponse> action, LockOpRequest lockRequest) {
        return channel -> {
            if (lockRequest.waits()) {
                new RestCancellableNodeClient(client, request.getHttpChannel())
                        .execute(action, lockRequest, new RestToXContentListener<>(channel));
            } else {
                client.execute(action, lockRequest, new RestToXContentListener<>(channel));
            }
        };
    }

    /**
     * The long poll of an election's and a group's {@code _observe}: reads the state with {@code
     * read}, answers it when it says {@code changed} or the wait ({@code deadline}, a {@link
     * System#nanoTime} instant) is over, else watches {@code key} in {@code scope} at {@code token}
     * (a term, a version) for the time left and reads again when the watch ends. A watch that fires
     * for a change undone before the read (a leader that resigned at once) goes on watching, so
     * {@code changed: false} only comes when the wait ran out.
     */
    protected static void observeUntil(
            Client client,
            String key,
            String scope,
            long token,
            long deadline,
            Consumer<ActionListener<Map<String, Object>>> read,
            ActionListener<Map<String, Object>> out) {
        read.accept(out.delegateFailureAndWrap((l, now) -> {
            long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (Boolean.TRUE.equals(BridgeField.CHANGED.in(now)) || leftMs <= 0) {
                l.onResponse(now);
                return;
            }
            Map<String, Object> args = new LinkedHashMap<>();
            BridgeField.KEY.put(args, key);
            BridgeField.SCOPE.put(args, scope);
            BridgeField.FENCING_TOKEN.put(args, token);
            BridgeField.WAIT_MS.put(args, leftMs);
            client.execute(
                    TransportWatchLockAction.TYPE,
                    LockOpRequest.of(NativeOp.WATCH, RoutingValues.of(key, scope), args),
                    l.delegateFailureAndWrap(
                            (l2, fired) -> observeUntil(client, key, scope, token, deadline, read, l2)));
        }));
    }
}
