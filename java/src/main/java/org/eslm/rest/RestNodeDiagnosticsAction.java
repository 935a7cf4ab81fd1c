package org.eslm.rest;

import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.eslm.action.NodeDiagnosticsRequest;
import org.eslm.action.TransportNodeDiagnosticsAction;

import java.util.List;

import static org.elasticsearch.rest.RestRequest.Method.GET;

/** {@code GET /_locks/_node/diagnostics}: the receiving node's lock manager, for admins. */
public final class RestNodeDiagnosticsAction extends BaseRestHandler {
    @Override
    public String getName() {
        return "locks_node_diagnostics_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_locks/_node/diagnostics"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        return channel -> client.execute(
            TransportNodeDiagnosticsAction.TYPE,
            new NodeDiagnosticsRequest(),
            new RestToXContentListener<>(channel)
        );
    }
}
