package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.List;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.common.Strings;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.eslm.action.LockDiagnosticsRequest;
import org.eslm.action.TransportLockDiagnosticsAction;

/** {@code GET /_locks/_diagnostics} (every node) and {@code GET /_locks/_diagnostics/{nodes}}. */
public final class RestLockDiagnosticsAction extends BaseRestHandler {
    @Override
    public String getName() {
        return "locks_diagnostics_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_locks/_diagnostics"), new Route(GET, "/_locks/_diagnostics/{nodes}"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        LockDiagnosticsRequest diagnostics =
                new LockDiagnosticsRequest(Strings.splitStringByCommaToArray(request.param("nodes")));
        return channel ->
                client.execute(TransportLockDiagnosticsAction.TYPE, diagnostics, new RestToXContentListener<>(channel));
    }
}
