package org.eslm.rest;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.action.ActionType;
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
import org.eslm.bridge.NativeOp;
import org.eslm.service.LockSettings;

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
        args.put("key", key);
        args.put("scope", scope);
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
}
