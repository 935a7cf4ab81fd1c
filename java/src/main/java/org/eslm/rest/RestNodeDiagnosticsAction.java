package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.List;
import java.util.Map;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.eslm.action.TransportNodeDiagnosticsAction;
import org.eslm.bridge.NativeOp;

/** {@code GET /_locks/_node/diagnostics}: the receiving node's lock manager, for admins. */
public final class RestNodeDiagnosticsAction extends LockRestHandler {
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
        return send(request, client, TransportNodeDiagnosticsAction.TYPE, NativeOp.DIAGNOSTICS, null, Map.of());
    }
}
