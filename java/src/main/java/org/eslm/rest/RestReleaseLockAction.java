package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.TransportReleaseLockAction;
import org.eslm.bridge.NativeOp;
import org.eslm.settings.LockSettings;

/** {@code POST /_locks/{key}/_release} and {@code POST /_locks/_release} (many keys, or {@code all}). */
public final class RestReleaseLockAction extends LockRestHandler {
    private final Supplier<LockSettings.Values> settings;

    public RestReleaseLockAction(Supplier<LockSettings.Values> settings) {
        this.settings = settings;
    }

    @Override
    public String getName() {
        return "locks_release_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(POST, "/_locks/{key}/_release"), new Route(POST, "/_locks/_release"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        String key = request.param("key");
        try (XContentParser parser = requiredParser(request, settings.get())) {
            if (key == null) {
                LockBodies.Args args = LockBodies.multiRelease(parser, settings.get());
                String routing =
                        args.containsKey("locks") ? LockBodies.routingValue(args) : LockBodies.ownerRouting(args);
                return send(request, client, TransportReleaseLockAction.TYPE, NativeOp.RELEASE_MANY, routing, args);
            }
            LockBodies.Args args = LockBodies.keyed(LockBodies.RELEASE, key, parser, settings.get());
            return send(
                    request,
                    client,
                    TransportReleaseLockAction.TYPE,
                    NativeOp.RELEASE,
                    LockBodies.routingValue(args),
                    args);
        }
    }
}
