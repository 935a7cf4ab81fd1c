package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.action.RoutingValues;
import org.eslm.action.TransportForceReleaseLockAction;
import org.eslm.bridge.NativeOp;
import org.eslm.settings.LockSettings;

/** {@code POST /_locks/{key}/_force_release}: admin eviction of a key's holders (logged). */
public final class RestForceReleaseLockAction extends LockRestHandler {
    private static final Logger logger = LogManager.getLogger(RestForceReleaseLockAction.class);
    private final Supplier<LockSettings.Values> settings;

    public RestForceReleaseLockAction(Supplier<LockSettings.Values> settings) {
        this.settings = settings;
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
        LockBodies.Args args = new LockBodies.Args();
        if (request.hasContent()) {
            try (XContentParser parser = request.contentParser()) {
                args = LockBodies.parse(LockBodies.FORCE_RELEASE, parser, settings.get());
            }
        }
        String reason = args.reason;
        args.put("key", key);
        logger.warn("force-release of lock [{}] requested{}", key, reason == null ? "" : ", reason [" + reason + "]");
        if (request.hasParam("routing")) {
            throw RoutingValues.routingRefused();
        }
        String routing = RoutingValues.of(key, (String) args.get("scope"));
        return send(
                request,
                client,
                TransportForceReleaseLockAction.TYPE,
                LockOpRequest.of(NativeOp.FORCE_RELEASE, routing, args, reason));
    }
}
