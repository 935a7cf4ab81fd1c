package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;
import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.LockOpRequest;
import org.eslm.action.TransportAcquireLockAction;
import org.eslm.action.TransportReleaseLockAction;
import org.eslm.action.TransportRenewLockAction;
import org.eslm.action.TransportSemaphoreLimitAction;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.settings.LockSettings;

/**
 * The counting semaphores: {@code POST /_semaphores/{name}/_acquire}, {@code _release}, {@code _renew},
 * {@code _limit} and {@code GET /_semaphores/{name}} (docs/API.md "Semaphores"). Thin on purpose: each is the lock
 * operation of the same name on the key {@code name} in scope {@code semaphore}, sent to the lock
 * transport action that serves it (so security sees the same {@code cluster:admin/locks/...} and
 * {@code cluster:monitor/locks/...} actions; a change of the limit, which changes what other owners
 * may hold, is the admin action {@code cluster:admin/lock_manager/semaphore_limit}), routed by the
 * name as a plain key is. The rules
 * (permits, limit, FIFO) are the core's (docs/LOCK_CORE.md "Semaphores").
 */
public final class RestSemaphoreAction extends LockRestHandler {
    private final Supplier<LockSettings.Values> settings;
    private final RequestBodies bodies;

    public RestSemaphoreAction(Supplier<LockSettings.Values> settings, RequestBodies bodies) {
        this.settings = settings;
        this.bodies = bodies;
    }

    @Override
    public String getName() {
        return "semaphores_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(
                new Route(POST, "/_semaphores/{name}/_acquire"),
                new Route(POST, "/_semaphores/{name}/_release"),
                new Route(POST, "/_semaphores/{name}/_renew"),
                new Route(POST, "/_semaphores/{name}/_limit"),
                new Route(GET, "/_semaphores/{name}"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        String name = request.param("name");
        if (request.method() == GET) {
            return keyInfo(request, client, name, LockScopes.SEMAPHORE);
        }
        String path = request.path();
        try (XContentParser parser = requiredParser(request, settings.get())) {
            if (path.endsWith("/_acquire")) {
                LockOpRequest acquire = bodies.request(NativeOp.ACQUIRE, NativeRequest.SEMAPHORE_ACQUIRE, name, parser);
                return send(request, client, TransportAcquireLockAction.TYPE, acquire);
            }
            if (path.endsWith("/_release")) {
                LockOpRequest release = bodies.request(NativeOp.RELEASE, NativeRequest.SEMAPHORE_RELEASE, name, parser);
                return send(request, client, TransportReleaseLockAction.TYPE, release);
            }
            if (path.endsWith("/_limit")) {
                LockOpRequest limit =
                        bodies.request(NativeOp.SEMAPHORE_LIMIT, NativeRequest.SEMAPHORE_LIMIT, name, parser);
                return send(request, client, TransportSemaphoreLimitAction.TYPE, limit);
            }
            LockOpRequest renew = bodies.request(NativeOp.RENEW, NativeRequest.SEMAPHORE_RENEW, name, parser);
            return send(request, client, TransportRenewLockAction.TYPE, renew);
        }
    }
}
