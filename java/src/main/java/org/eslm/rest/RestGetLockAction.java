package org.eslm.rest;

import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.eslm.action.GetLockRequest;
import org.eslm.action.TransportGetLockAction;

import java.util.List;

import static org.elasticsearch.rest.RestRequest.Method.GET;

/** {@code GET /_locks/{key}}: holders of one key (200 with an empty list when free). */
public final class RestGetLockAction extends BaseRestHandler {
    @Override
    public String getName() {
        return "locks_get_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_locks/{key}"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        GetLockRequest get = new GetLockRequest(request.param("key"));
        return channel -> client.execute(TransportGetLockAction.TYPE, get, new RestToXContentListener<>(channel));
    }
}
