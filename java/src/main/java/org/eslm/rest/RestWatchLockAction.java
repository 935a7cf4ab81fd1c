package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.eslm.action.RoutingValues;
import org.eslm.action.TransportWatchLockAction;
import org.eslm.bridge.NativeOp;
import org.eslm.settings.LockSettings;

/**
 * {@code GET /_locks/{key}/_watch?token=<t>&wait=<d>}: a long poll that answers as soon as the
 * lock of {@code key} with fencing token {@code t} no longer holds, with the reason, or with
 * {@code changed: false} when {@code wait} ran out (docs/API.md "Watch a lock"); with {@code
 * revoke=true} also when a preempting waiter asks the holder to yield ({@code revoke_requested},
 * docs/API.md "Preemption"). Addressed like {@code GET /_locks/{key}} ({@code scope=tree} for a
 * tree node; no {@code routing}).
 */
public final class RestWatchLockAction extends LockRestHandler {
    private final Supplier<LockSettings.Values> settings;

    public RestWatchLockAction(Supplier<LockSettings.Values> settings) {
        this.settings = settings;
    }

    @Override
    public String getName() {
        return "locks_watch_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_locks/{key}/_watch"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String key = request.param("key");
        String scope = RestGetLockAction.scopeParam(request);
        if (request.hasParam("routing")) {
            throw RoutingValues.routingRefused();
        }
        long token = token(request.param("token"));
        String wait = request.param("wait");
        if (wait == null) {
            throw new IllegalArgumentException("[wait] is required: how long to watch, like [30s]");
        }
        LockSettings.Values values = settings.get();
        Map<String, Object> args = new LinkedHashMap<>();
        args.put("key", key);
        args.put("scope", scope);
        args.put("fencing_token", token);
        args.put("wait_ms", LockBodies.duration("wait", wait, values.waitMax(), LockSettings.WAIT_MAX.getKey()));
        if (revokeParam(request.param("revoke"))) {
            args.put("revoke", true); // also answer a request to yield (docs/API.md "Preemption")
        }
        String routing = RoutingValues.of(key, scope);
        return send(request, client, TransportWatchLockAction.TYPE, NativeOp.WATCH, routing, args);
    }

    /** The {@code revoke} parameter: {@code true} or {@code false} (the default). */
    static boolean revokeParam(String value) {
        if (value == null || value.equals("false")) {
            return false;
        }
        if (value.equals("true")) {
            return true;
        }
        throw new IllegalArgumentException("[revoke] must be true or false, got [" + value + "]");
    }

    /** The {@code token} parameter: a fencing token, a positive whole number. */
    static long token(String value) {
        if (value == null) {
            throw new IllegalArgumentException("[token] is required: the fencing token of the lock to watch");
        }
        try {
            long token = Long.parseLong(value);
            if (token > 0) {
                return token;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new IllegalArgumentException(
                "[token] must be a fencing token (a positive whole number), got [" + value + "]");
    }
}
