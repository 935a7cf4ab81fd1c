package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.List;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.common.Strings;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.eslm.action.LockStatsRequest;
import org.eslm.action.TransportLockStatsAction;

/** {@code GET /_locks/_stats} (all nodes) and {@code GET /_locks/_stats/{nodes}}: per node and total. */
public final class RestLockStatsAction extends BaseRestHandler {
    @Override
    public String getName() {
        return "locks_stats_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_locks/_stats"), new Route(GET, "/_locks/_stats/{nodes}"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        LockStatsRequest stats = new LockStatsRequest(Strings.splitStringByCommaToArray(request.param("nodes")));
        return channel -> client.execute(TransportLockStatsAction.TYPE, stats, new RestToXContentListener<>(channel));
    }
}
