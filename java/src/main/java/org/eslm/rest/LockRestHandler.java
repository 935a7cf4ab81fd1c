package org.eslm.rest;

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

import java.io.IOException;
import java.util.Map;

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
     * Sends one operation to its transport action. Requests that may wait go through
     * {@link RestCancellableNodeClient}, so a client that disconnects cancels its waiter.
     */
    protected static RestChannelConsumer send(
        RestRequest request,
        NodeClient client,
        ActionType<LockOpResponse> action,
        NativeOp op,
        String key,
        Map<String, ?> args
    ) {
        boolean waits = args.get("wait_ms") instanceof Number n && n.longValue() > 0;
        LockOpRequest lockRequest = new LockOpRequest(op, key, args, waits);
        return channel -> {
            if (waits) {
                new RestCancellableNodeClient(client, request.getHttpChannel()).execute(action, lockRequest, new RestToXContentListener<>(channel));
            } else {
                client.execute(action, lockRequest, new RestToXContentListener<>(channel));
            }
        };
    }
}
