package org.eslm.api;

import java.util.LinkedHashMap;
import java.util.Map;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.core.CheckedSupplier;
import org.elasticsearch.core.TimeValue;
import org.eslm.action.LockOpRequest;
import org.eslm.action.LockOpResponse;
import org.eslm.action.TransportAcquireLockAction;
import org.eslm.action.TransportReleaseLockAction;
import org.eslm.action.TransportRenewLockAction;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.rest.RequestBodies;

/**
 * Locks for code that runs inside Elasticsearch, in another plugin (README "Locking from another
 * plugin"): acquire with a wait and a priority, renew, release — the operations of
 * {@code POST /_locks/{key}/_acquire|_renew|_release} (docs/API.md), through the same transport
 * actions, so they are routed to the partition's owner, replicated and fenced exactly like
 * requests over HTTP, without HTTP.
 *
 * <p>Every method answers through its listener and never blocks the calling thread, also while
 * a request waits in a lock's queue (docs/ARCHITECTURE.md "The path of one request"). Failures reach
 * {@code onFailure} as the REST API's errors do: {@link IllegalArgumentException} naming the
 * field for bad input, and the {@code org.eslm.core} exceptions for lock outcomes
 * ({@code LockConflictException}, {@code LockWaitTimeoutException}, {@code LockNotHeldException},
 * {@code LockPartitionUnavailableException} (retryable), ...).
 *
 * <p>Requests run as the thread context that calls them: with security on, a background job
 * stashes its context and runs under an identity allowed {@code cluster:admin/locks/*}.
 */
public final class PluginLocks {
    private final Client client;
    private final RequestBodies bodies;

    /**
     * Built by the lock manager; plugins get it through {@link LockManagerExtension}. The bodies
     * go through the core's reading of the REST bodies, so a request from another plugin gets
     * the same defaults, bounds and errors as one over HTTP.
     */
    public PluginLocks(Client client, RequestBodies bodies) {
        this.client = client;
        this.bodies = bodies;
    }

    /** Acquires {@code key}: granted at once, after queueing up to the request's wait, or failed. */
    public void acquire(String key, Acquire request, ActionListener<Grant> listener) {
        send(
                TransportAcquireLockAction.TYPE,
                () -> bodies.request(NativeOp.ACQUIRE, NativeRequest.LOCK_ACQUIRE, key, request.body()),
                listener.map(response -> Grant.of(response.body())));
    }

    /** Extends the lease of {@code grant} to {@code lease} from now; the token does not change. */
    public void renew(Grant grant, TimeValue lease, ActionListener<Grant> listener) {
        Map<String, Object> body = ofGrant(grant);
        body.put("lease", lease.getStringRep());
        send(
                TransportRenewLockAction.TYPE,
                () -> bodies.request(NativeOp.RENEW, NativeRequest.LOCK_RENEW, grant.key(), body),
                listener.map(response -> Grant.of(response.body())));
    }

    /** Releases {@code grant} (only that grant: a newer one of the same owner stays). */
    public void release(Grant grant, ActionListener<Void> listener) {
        send(
                TransportReleaseLockAction.TYPE,
                () -> bodies.request(NativeOp.RELEASE, NativeRequest.LOCK_RELEASE, grant.key(), ofGrant(grant)),
                listener.map(response -> null));
    }

    /** Owner, token and scope: what names one grant in a renew or a release. */
    private static Map<String, Object> ofGrant(Grant grant) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("owner", grant.owner());
        body.put("fencing_token", grant.fencingToken());
        if (BridgeField.SCOPE.in(grant.body()) instanceof String scope) {
            body.put("scope", scope);
        }
        return body;
    }

    private void send(
            ActionType<LockOpResponse> action,
            CheckedSupplier<LockOpRequest, Exception> request,
            ActionListener<LockOpResponse> listener) {
        LockOpRequest parsed;
        try {
            parsed = request.get();
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        client.execute(action, parsed, listener);
    }
}
