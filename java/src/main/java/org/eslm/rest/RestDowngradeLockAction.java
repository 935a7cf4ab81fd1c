package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.TransportDowngradeLockAction;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.settings.LockSettings;

/** {@code POST /_locks/{key}/_downgrade}: weaken a held lock's mode, keeping its token and lease. */
public final class RestDowngradeLockAction extends LockRestHandler {
    private final Supplier<LockSettings.Values> settings;
    private final RequestBodies bodies;

    public RestDowngradeLockAction(Supplier<LockSettings.Values> settings, RequestBodies bodies) {
        this.settings = settings;
        this.bodies = bodies;
    }

    @Override
    public String getName() {
        return "locks_downgrade_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(POST, "/_locks/{key}/_downgrade"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        String key = request.param("key");
        try (XContentParser parser = requiredParser(request, settings.get())) {
            return send(
                    request,
                    client,
                    TransportDowngradeLockAction.TYPE,
                    bodies.request(NativeOp.DOWNGRADE, NativeRequest.LOCK_DOWNGRADE, key, parser));
        }
    }
}
