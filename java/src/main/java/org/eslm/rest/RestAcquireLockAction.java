package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.action.TransportAcquireLockAction;
import org.eslm.action.TransportPreemptLockAction;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.settings.LockSettings;

/**
 * {@code POST /_locks/{key}/_acquire} (one key) and {@code POST /_locks/_acquire} (many keys,
 * all-or-nothing). See docs/API.md for the body.
 */
public final class RestAcquireLockAction extends LockRestHandler {
    private final Supplier<LockSettings.Values> settings;
    private final RequestBodies bodies;

    public RestAcquireLockAction(Supplier<LockSettings.Values> settings, RequestBodies bodies) {
        this.settings = settings;
        this.bodies = bodies;
    }

    @Override
    public String getName() {
        return "locks_acquire_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(POST, "/_locks/{key}/_acquire"), new Route(POST, "/_locks/_acquire"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        // Parse now: the body is released when this method returns.
        String key = request.param("key");
        try (XContentParser parser = requiredParser(request, settings.get())) {
            if (key == null) {
                LockOpRequest many =
                        bodies.request(NativeOp.ACQUIRE_MANY, NativeRequest.LOCK_MULTI_ACQUIRE, null, parser);
                return send(request, client, TransportAcquireLockAction.TYPE, many);
            }
            LockOpRequest one = bodies.request(NativeOp.ACQUIRE, NativeRequest.LOCK_ACQUIRE, key, parser);
            // Preempting takes locks from other owners: the admin's action, not the holder's own.
            return send(
                    request,
                    client,
                    one.preempts() ? TransportPreemptLockAction.TYPE : TransportAcquireLockAction.TYPE,
                    one);
        }
    }
}
