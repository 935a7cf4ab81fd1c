package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpResponse;
import org.eslm.action.TransportDowngradeLockAction;
import org.eslm.action.TransportRenewLockAction;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.settings.LockSettings;

/**
 * {@code POST /_locks/{key}/<verb>}: a change its holder makes to a lock it holds, named by the
 * body's token or acquisition: {@link #renew} ({@code _renew}: a longer lease) and {@link
 * #downgrade} ({@code _downgrade}: a weaker mode). One class, since they differ only in what they
 * are called and which op and body they carry. Each route is written out whole, as in every handler, so
 * tests/test_rest_api_spec.py can match it to its spec.
 */
public final class RestHeldLockAction extends LockRestHandler {
    private final String name;
    private final Route route;
    private final ActionType<LockOpResponse> type;
    private final NativeOp op;
    private final NativeRequest kind;
    private final Supplier<LockSettings.Values> settings;
    private final RequestBodies bodies;

    private RestHeldLockAction(
            String name,
            Route route,
            ActionType<LockOpResponse> type,
            NativeOp op,
            NativeRequest kind,
            Supplier<LockSettings.Values> settings,
            RequestBodies bodies) {
        this.name = name;
        this.route = route;
        this.type = type;
        this.op = op;
        this.kind = kind;
        this.settings = settings;
        this.bodies = bodies;
    }

    /** {@code POST /_locks/{key}/_renew}: extend a held lock's lease. */
    public static RestHeldLockAction renew(Supplier<LockSettings.Values> settings, RequestBodies bodies) {
        return new RestHeldLockAction(
                "locks_renew_action",
                new Route(POST, "/_locks/{key}/_renew"),
                TransportRenewLockAction.TYPE,
                NativeOp.RENEW,
                NativeRequest.LOCK_RENEW,
                settings,
                bodies);
    }

    /** {@code POST /_locks/{key}/_downgrade}: weaken a held lock's mode, keeping its token and lease. */
    public static RestHeldLockAction downgrade(Supplier<LockSettings.Values> settings, RequestBodies bodies) {
        return new RestHeldLockAction(
                "locks_downgrade_action",
                new Route(POST, "/_locks/{key}/_downgrade"),
                TransportDowngradeLockAction.TYPE,
                NativeOp.DOWNGRADE,
                NativeRequest.LOCK_DOWNGRADE,
                settings,
                bodies);
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public List<Route> routes() {
        return List.of(route);
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        String key = request.param("key");
        try (XContentParser parser = requiredParser(request, settings.get())) {
            return send(request, client, type, bodies.request(op, kind, key, parser));
        }
    }
}
