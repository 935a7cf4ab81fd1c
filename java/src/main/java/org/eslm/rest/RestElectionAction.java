package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;
import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestCancellableNodeClient;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.action.LockOpResponse;
import org.eslm.action.RoutingValues;
import org.eslm.action.TransportAcquireLockAction;
import org.eslm.action.TransportGetLockAction;
import org.eslm.action.TransportReleaseLockAction;
import org.eslm.action.TransportRenewLockAction;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.settings.LockSettings;

/**
 * Leader elections (docs/API.md "Elections"): {@code POST /_elections/{name}/_campaign},
 * {@code _resign}, {@code _renew}, {@code GET /_elections/{name}} and its {@code _observe}
 * long poll. Thin like the semaphores: each is a lock operation on the key {@code name} in scope
 * {@code election} (candidate = owner, term = fencing token) through the lock transport action
 * that serves it, so security sees the same {@code cluster:admin/locks/...} and
 * {@code cluster:monitor/locks/...} actions; only the answer's field names change, renamed by this
 * node's core ({@code view}: rust/lock-jni {@code ops/elections.rs}). The rules are the core's
 * (docs/LOCK_CORE.md "Elections").
 */
public final class RestElectionAction extends LockRestHandler {
    private final Supplier<LockSettings.Values> settings;
    private final RequestBodies bodies;
    private final UnaryOperator<Map<String, Object>> view;

    /**
     * @param view the core's election view: {@code {"elected": grant}} or {@code {"state": key info,
     *     "observed_term"?}} to the election's body ({@code LockService#electionView})
     */
    public RestElectionAction(
            Supplier<LockSettings.Values> settings, RequestBodies bodies, UnaryOperator<Map<String, Object>> view) {
        this.settings = settings;
        this.bodies = bodies;
        this.view = view;
    }

    @Override
    public String getName() {
        return "elections_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(
                new Route(POST, "/_elections/{name}/_campaign"),
                new Route(POST, "/_elections/{name}/_resign"),
                new Route(POST, "/_elections/{name}/_renew"),
                new Route(GET, "/_elections/{name}"),
                new Route(GET, "/_elections/{name}/_observe"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        String name = pathName("name", request.param("name"));
        String routing = RoutingValues.of(name, LockScopes.ELECTION);
        if (request.method() == GET) {
            if (request.hasParam("routing")) {
                throw RoutingValues.routingRefused();
            }
            if (request.path().endsWith("/_observe")) {
                return observe(request, client, name, routing);
            }
            return channel -> state(client, name, routing, null, toChannel(channel));
        }
        String path = request.path();
        LockSettings.Values values = settings.get();
        try (XContentParser parser = requiredParser(request, values)) {
            if (path.endsWith("/_campaign")) {
                LockOpRequest op = bodies.request(NativeOp.ACQUIRE, NativeRequest.ELECTION_CAMPAIGN, name, parser);
                return channel -> new RestCancellableNodeClient(client, request.getHttpChannel())
                        .execute(
                                TransportAcquireLockAction.TYPE,
                                op,
                                shaped(toChannel(channel), grant -> view.apply(Map.of("elected", grant))));
            }
            if (path.endsWith("/_resign")) {
                LockOpRequest resign = bodies.request(NativeOp.RELEASE, NativeRequest.ELECTION_RESIGN, name, parser);
                return send(request, client, TransportReleaseLockAction.TYPE, resign);
            }
            LockOpRequest renew = bodies.request(NativeOp.RENEW, NativeRequest.ELECTION_RENEW, name, parser);
            return send(request, client, TransportRenewLockAction.TYPE, renew);
        }
    }

    /**
     * {@code _observe?term=t&wait=d}: answers the state as soon as the leader's term is not
     * {@code t}. With {@code t} the current term, a watch on that lock (it ends on resign,
     * expiry or force-release); with no leader and {@code t = 0}, the core's watch for the
     * election's next holder (fencing token 0); otherwise the state at once.
     */
    private RestChannelConsumer observe(RestRequest request, NodeClient client, String name, String routing) {
        Map<String, Object> params = bodies.params(NativeRequest.ELECTION_OBSERVE, name, request, "term", "wait");
        long term = BridgeField.FENCING_TOKEN.in(params) instanceof Number t ? t.longValue() : 0;
        long waitMs = ((Number) BridgeField.WAIT_MS.in(params)).longValue();
        return channel -> {
            RestCancellableNodeClient cancellable = new RestCancellableNodeClient(client, request.getHttpChannel());
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
            observeUntil(
                    cancellable,
                    name,
                    LockScopes.ELECTION,
                    term,
                    deadline,
                    l -> state(cancellable, name, routing, term, l),
                    toChannel(channel));
        };
    }

    /** The election's state from the key's info; with {@code changed} when observing {@code observedTerm}. */
    private void state(
            org.elasticsearch.client.internal.Client client,
            String name,
            String routing,
            Long observedTerm,
            ActionListener<Map<String, Object>> listener) {
        Map<String, Object> args = new LinkedHashMap<>();
        BridgeField.KEY.put(args, name);
        BridgeField.SCOPE.put(args, LockScopes.ELECTION);
        client.execute(
                TransportGetLockAction.TYPE,
                LockOpRequest.of(NativeOp.KEY_INFO, routing, args),
                shaped(
                        listener,
                        info -> view.apply(
                                observedTerm == null
                                        ? Map.of("state", info)
                                        : Map.of("state", info, "observed_term", observedTerm))));
    }

    /** A listener of lock answers that passes on their bodies reshaped. */
    private static ActionListener<LockOpResponse> shaped(
            ActionListener<Map<String, Object>> listener, Function<Map<String, Object>, Map<String, Object>> shape) {
        return listener.map(r -> shape.apply(r.body()));
    }

    private static ActionListener<Map<String, Object>> toChannel(org.elasticsearch.rest.RestChannel channel) {
        ActionListener<LockOpResponse> rest = new RestToXContentListener<>(channel);
        return rest.map(body -> new LockOpResponse(body));
    }
}
