package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.action.RoutingValues;
import org.eslm.action.TransportForceReleaseLockAction;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;

/** {@code POST /_locks/{key}/_force_release}: admin eviction of a key's holders (logged). */
public final class RestForceReleaseLockAction extends LockRestHandler {
    private static final Logger logger = LogManager.getLogger(RestForceReleaseLockAction.class);
    private final RequestBodies bodies;

    public RestForceReleaseLockAction(RequestBodies bodies) {
        this.bodies = bodies;
    }

    @Override
    public String getName() {
        return "locks_force_release_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(POST, "/_locks/{key}/_force_release"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        String key = request.param("key");
        LockOpRequest forced;
        if (request.hasContent()) {
            try (XContentParser parser = request.contentParser()) {
                forced = bodies.request(NativeOp.FORCE_RELEASE, NativeRequest.LOCK_FORCE_RELEASE, key, parser);
            }
        } else {
            forced = bodies.request(NativeOp.FORCE_RELEASE, NativeRequest.LOCK_FORCE_RELEASE, key, Map.of());
        }
        String reason = forced.reason();
        logger.warn("force-release of lock [{}] requested{}", key, reason == null ? "" : ", reason [" + reason + "]");
        if (request.hasParam("routing")) {
            throw RoutingValues.routingRefused();
        }
        return send(request, client, TransportForceReleaseLockAction.TYPE, forced);
    }
}
