package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.DELETE;
import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.TransportLockSessionAction;
import org.eslm.bridge.NativeOp;
import org.eslm.settings.LockSettings;

/**
 * Sessions: {@code POST /_locks/_session} creates one ({@code owner}, {@code ttl}),
 * {@code POST /_locks/_session/{id}/_keepalive} renews it, {@code DELETE /_locks/_session/{id}}
 * ends it and releases its locks. Keep-alive and end take {@code {"owner"}} in their body, as
 * release and renew do: the core refuses any other owner as it refuses an unknown session.
 */
public final class RestLockSessionAction extends LockRestHandler {
    private final Supplier<LockSettings.Values> settings;

    public RestLockSessionAction(Supplier<LockSettings.Values> settings) {
        this.settings = settings;
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
                LockBodies.Args args = LockBodies.session(parser, settings.get());
                return send(
                        request,
                        client,
                        TransportLockSessionAction.TYPE,
                        NativeOp.SESSION_CREATE,
                        LockBodies.ownerRouting(args),
                        args);
            }
        }
        boolean end = request.method() == DELETE;
        NativeOp op = end ? NativeOp.SESSION_END : NativeOp.SESSION_KEEPALIVE;
        try (XContentParser parser = requiredParser(request)) {
            LockBodies.Args args =
                    LockBodies.sessionOwner(end ? LockBodies.SESSION_END : LockBodies.SESSION_KEEPALIVE, id, parser);
            return send(request, client, TransportLockSessionAction.TYPE, op, "", args);
        }
    }
}
