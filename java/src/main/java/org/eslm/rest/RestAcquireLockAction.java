package org.eslm.rest;

import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.AcquireLockRequest;
import org.eslm.action.TransportAcquireLockAction;

import java.io.IOException;
import java.util.List;

import static org.elasticsearch.rest.RestRequest.Method.POST;

/** {@code POST /_locks/{key}/_acquire} with body {@code {"owner", "mode"?}}. */
public final class RestAcquireLockAction extends BaseRestHandler {
    @Override
    public String getName() {
        return "locks_acquire_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(POST, "/_locks/{key}/_acquire"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        // Parse now: the body is released when this method returns.
        AcquireLockRequest acquire;
        try (XContentParser parser = RestBodies.requiredParser(request)) {
            acquire = AcquireLockRequest.fromXContent(request.param("key"), parser);
        }
        return channel -> client.execute(TransportAcquireLockAction.TYPE, acquire, new RestToXContentListener<>(channel));
    }
}
