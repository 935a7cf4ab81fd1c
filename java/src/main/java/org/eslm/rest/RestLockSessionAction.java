package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.DELETE;
import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.action.TransportLockSessionAction;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.settings.LockSettings;

/**
 * Sessions: {@code POST /_locks/_session} creates one ({@code owner}, {@code ttl}),
 * {@code POST /_locks/_session/{id}/_keepalive} renews it, {@code DELETE /_locks/_session/{id}}
 * ends it and releases its locks. Keep-alive and end take {@code {"owner"}} in their body, as
 * release and renew do: the core refuses any other owner as it refuses an unknown session.
 */
public final class RestLockSessionAction extends LockRestHandler {
    private final Supplier<LockSettings.Values> settings;
    private final RequestBodies bodies;

    public RestLockSessionAction(Supplier<LockSettings.Values> settings, RequestBodies bodies) {
        this.settings = settings;
        this.bodies = bodies;
    }

    @Override
    public String getName() {
        return "locks_session_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(
                new Route(POST, "/_locks/_session"),
                new Route(POST, "/_locks/_session/{id}/_keepalive"),
                new Route(DELETE, "/_locks/_session/{id}"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        String id = request.param("id");
        if (id == null) {
            try (XContentParser parser = requiredParser(request, settings.get())) {
                LockOpRequest create =
                        bodies.request(NativeOp.SESSION_CREATE, NativeRequest.LOCK_SESSION, null, parser);
                return send(request, client, TransportLockSessionAction.TYPE, create);
            }
        }
        boolean end = request.method() == DELETE;
        NativeOp op = end ? NativeOp.SESSION_END : NativeOp.SESSION_KEEPALIVE;
        NativeRequest kind = end ? NativeRequest.LOCK_SESSION_END : NativeRequest.LOCK_SESSION_KEEPALIVE;
        try (XContentParser parser = requiredParser(request)) {
            return send(request, client, TransportLockSessionAction.TYPE, bodies.sessionRequest(op, kind, id, parser));
        }
    }
}
