package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.action.TransportReleaseLockAction;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.settings.LockSettings;

/** {@code POST /_locks/{key}/_release} and {@code POST /_locks/_release} (many keys, or {@code all}). */
public final class RestReleaseLockAction extends LockRestHandler {
    private final Supplier<LockSettings.Values> settings;
    private final RequestBodies bodies;

    public RestReleaseLockAction(Supplier<LockSettings.Values> settings, RequestBodies bodies) {
        this.settings = settings;
        this.bodies = bodies;
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
            LockOpRequest release = key == null
                    ? bodies.request(NativeOp.RELEASE_MANY, NativeRequest.LOCK_MULTI_RELEASE, null, parser)
                    : bodies.request(NativeOp.RELEASE, NativeRequest.LOCK_RELEASE, key, parser);
            return send(request, client, TransportReleaseLockAction.TYPE, release);
        }
    }
}
