package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.DELETE;
import static org.elasticsearch.rest.RestRequest.Method.GET;
import static org.elasticsearch.rest.RestRequest.Method.POST;
import static org.elasticsearch.rest.RestRequest.Method.PUT;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.support.GroupedActionListener;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestChannel;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestCancellableNodeClient;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.action.LockOpResponse;
import org.eslm.action.RoutingValues;
import org.eslm.action.TransportAcquireLockAction;
import org.eslm.action.TransportGetLockAction;
import org.eslm.action.TransportGroupAction;
import org.eslm.action.TransportReleaseLockAction;
import org.eslm.action.TransportRenewLockAction;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.cluster.PartitionTable;
import org.eslm.settings.LockSettings;

/**
 * Groups (docs/API.md "Groups"): {@code PUT|DELETE|GET /_groups/{name}}, {@code GET /_groups},
 * {@code POST /_groups/{name}/_join|_leave|_heartbeat|_update} and the {@code _observe} long
 * poll. A membership is a shared lock of the group's key in scope {@code group}, so join, leave
 * and heartbeat are the lock actions (acquire, release, renew); creating and deleting a group and
 * changing capabilities are {@link TransportGroupAction}; reads are the get and watch actions.
 * The rules are the core's (docs/LOCK_CORE.md "Groups").
 */
public final class RestGroupAction extends LockRestHandler {
    private final Supplier<LockSettings.Values> settings;
    private final RequestBodies bodies;
    private final Supplier<PartitionTable> partitions;

    /** @param partitions the cluster's lock partitions now ({@code null} before the lock index exists) */
    public RestGroupAction(
            Supplier<LockSettings.Values> settings, RequestBodies bodies, Supplier<PartitionTable> partitions) {
        this.settings = settings;
        this.bodies = bodies;
        this.partitions = partitions;
    }

    @Override
    public String getName() {
        return "groups_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(
                new Route(GET, "/_groups"),
                new Route(PUT, "/_groups/{name}"),
                new Route(DELETE, "/_groups/{name}"),
                new Route(GET, "/_groups/{name}"),
                new Route(GET, "/_groups/{name}/_observe"),
                new Route(POST, "/_groups/{name}/_join"),
                new Route(POST, "/_groups/{name}/_leave"),
                new Route(POST, "/_groups/{name}/_heartbeat"),
                new Route(POST, "/_groups/{name}/_update"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        if (request.hasParam("routing")) {
            throw RoutingValues.routingRefused();
        }
        if (request.param("name") == null) {
            return channel -> listGroups(client, toChannel(channel));
        }
        String name = pathName("group", request.param("name"));
        String routing = RoutingValues.of(name, LockScopes.GROUP);
        if (request.method() == GET) {
            return request.path().endsWith("/_observe")
                    ? observe(request, client, name, routing)
                    : channel -> info(client, name, routing, null, toChannel(channel));
        }
        if (request.method() == PUT || request.method() == DELETE) {
            NativeOp op = request.method() == PUT ? NativeOp.GROUP_CREATE : NativeOp.GROUP_DELETE;
            return send(request, client, TransportGroupAction.TYPE, op, routing, Map.of(LockScopes.GROUP, name));
        }
        String path = request.path();
        LockSettings.Values values = settings.get();
        try (XContentParser parser = requiredParser(request, values)) {
            if (path.endsWith("/_join")) {
                LockOpRequest join = bodies.request(NativeOp.ACQUIRE, NativeRequest.GROUP_JOIN, name, parser);
                return send(request, client, TransportAcquireLockAction.TYPE, join);
            }
            if (path.endsWith("/_update")) {
                Map<String, Object> args = bodies.args(NativeRequest.GROUP_UPDATE, name, parser);
                return send(request, client, TransportGroupAction.TYPE, NativeOp.GROUP_UPDATE, routing, args);
            }
            if (path.endsWith("/_leave")) {
                LockOpRequest leave = bodies.request(NativeOp.RELEASE, NativeRequest.GROUP_LEAVE, name, parser);
                return send(request, client, TransportReleaseLockAction.TYPE, leave);
            }
            LockOpRequest heartbeat = bodies.request(NativeOp.RENEW, NativeRequest.GROUP_HEARTBEAT, name, parser);
            return send(request, client, TransportRenewLockAction.TYPE, heartbeat);
        }
    }

    /** {@code GET /_groups}: every partition's groups, asked of each partition's owner, in name order. */
    private void listGroups(Client client, ActionListener<Map<String, Object>> out) {
        PartitionTable table = partitions.get();
        if (table == null) {
            out.onResponse(Map.of("groups", List.of()));
            return;
        }
        ActionListener<Collection<LockOpResponse>> all = out.map(answers -> {
            TreeSet<String> names = new TreeSet<>();
            for (LockOpResponse answer : answers) {
                if (answer.body().get("groups") instanceof List<?> listed) {
                    listed.forEach(n -> names.add(String.valueOf(n)));
                }
            }
            return Map.of("groups", new ArrayList<>(names));
        });
        GroupedActionListener<LockOpResponse> each = new GroupedActionListener<>(table.size(), all);
        for (int p = 0; p < table.size(); p++) {
            client.execute(
                    TransportGetLockAction.TYPE,
                    LockOpRequest.of(NativeOp.GROUP_LIST, table.routingValueOf(p), Map.of()),
                    each);
        }
    }

    /**
     * {@code _observe?version=v&wait=d}: answers the group as soon as its version is not
     * {@code v}, or unchanged when the wait runs out (as an election's {@code _observe}).
     */
    private RestChannelConsumer observe(RestRequest request, NodeClient client, String name, String routing) {
        Map<String, Object> params = bodies.params(NativeRequest.GROUP_OBSERVE, name, request, "version", "wait");
        long version = BridgeField.FENCING_TOKEN.in(params) instanceof Number v ? v.longValue() : 0;
        long waitMs = ((Number) BridgeField.WAIT_MS.in(params)).longValue();
        return channel -> {
            RestCancellableNodeClient cancellable = new RestCancellableNodeClient(client, request.getHttpChannel());
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
            observeUntil(
                    cancellable,
                    name,
                    LockScopes.GROUP,
                    version,
                    deadline,
                    l -> info(cancellable, name, routing, version, l),
                    toChannel(channel));
        };
    }

    /** The group's members and version; with {@code changed} when observing {@code observed}. */
    private static void info(
            Client client, String name, String routing, Long observed, ActionListener<Map<String, Object>> out) {
        Map<String, Object> args = new LinkedHashMap<>();
        args.put(LockScopes.GROUP, name);
        if (observed != null) {
            args.put("observed_version", observed);
        }
        client.execute(
                TransportGetLockAction.TYPE,
                LockOpRequest.of(NativeOp.GROUP_INFO, routing, args),
                out.map(LockOpResponse::body));
    }

    private static ActionListener<Map<String, Object>> toChannel(RestChannel channel) {
        ActionListener<LockOpResponse> rest = new RestToXContentListener<>(channel);
        return rest.map(LockOpResponse::new);
    }
}
