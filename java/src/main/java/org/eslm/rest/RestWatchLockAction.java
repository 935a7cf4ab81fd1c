package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.List;
import java.util.Map;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.eslm.action.RoutingValues;
import org.eslm.action.TransportWatchLockAction;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;

/**
 * {@code GET /_locks/{key}/_watch?token=<t>&wait=<d>}: a long poll that answers as soon as the
 * lock of {@code key} with fencing token {@code t} no longer holds, with the reason, or with
 * {@code changed: false} when {@code wait} ran out (docs/API.md "Watch a lock"); with {@code
 * revoke=true} also when a preempting waiter asks the holder to yield ({@code revoke_requested},
 * docs/API.md "Preemption"). Addressed like {@code GET /_locks/{key}} ({@code scope=tree} for a
 * tree node; no {@code routing}).
 */
public final class RestWatchLockAction extends LockRestHandler {
    private final RequestBodies bodies;

    public RestWatchLockAction(RequestBodies bodies) {
        this.bodies = bodies;
    }

    @Override
    public String getName() {
        return "locks_watch_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_locks/{key}/_watch"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String key = request.param("key");
        String scope = RestGetLockAction.scopeParam(request);
        if (request.hasParam("routing")) {
            throw RoutingValues.routingRefused();
        }
        // token, wait and revoke (also answer a request to yield, docs/API.md "Preemption") are read by the core
        Map<String, Object> args = bodies.params(NativeRequest.LOCK_WATCH, key, request, "token", "wait", "revoke");
        BridgeField.SCOPE.put(args, scope);
        return send(request, client, TransportWatchLockAction.TYPE, NativeOp.WATCH, RoutingValues.of(key, scope), args);
    }
}
