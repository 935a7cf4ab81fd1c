package org.eslm.rest;

import java.io.IOException;
import java.util.Map;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestCancellableNodeClient;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.action.LockOpResponse;
import org.eslm.bridge.NativeOp;

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
