package org.eslm.rest;

import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.ReleaseLockRequest;
import org.eslm.action.TransportReleaseLockAction;

import java.io.IOException;
import java.util.List;

import static org.elasticsearch.rest.RestRequest.Method.POST;

/** {@code POST /_locks/{key}/_release} with body {@code {"owner", "fencing_token"?}}. */
public final class RestReleaseLockAction extends BaseRestHandler {
    @Override
    public String getName() {
        return "locks_release_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(POST, "/_locks/{key}/_release"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        ReleaseLockRequest release;
        try (XContentParser parser = RestBodies.requiredParser(request)) {
            release = ReleaseLockRequest.fromXContent(request.param("key"), parser);
        }
        return channel -> client.execute(TransportReleaseLockAction.TYPE, release, new RestToXContentListener<>(channel));
    }
}
