package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestToXContentListener;
import org.eslm.action.ListPages;
import org.eslm.action.TransportListLocksAction;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLimits;
import org.eslm.core.BridgeJson;

/**
 * {@code GET /_locks/{key}} (holders and waiters; {@code ?scope=tree} for a tree node) and
 * {@code GET /_locks} (one page of held locks, filtered by {@code owner} and {@code prefix}, after the
 * cursor {@code after}, at most {@code size}).
 */
public final class RestGetLockAction extends LockRestHandler {
    /**
     * {@code size} when the client names none ({@link NativeLimits#LIST_DEFAULT_SIZE}): a page a
     * person can read, as {@code _cat} APIs do.
     */
    static final int DEFAULT_LIST_SIZE = NativeLimits.LIST_DEFAULT_SIZE;
    /**
     * The largest {@code size} ({@link NativeLimits#LIST_MAX_SIZE}): each partition builds its page
     * while its lock is held, so a page is bounded (rust/lock-core/src/table/listing.rs); clients
     * follow {@code next} for more.
     */
    static final int MAX_LIST_SIZE = NativeLimits.LIST_MAX_SIZE;

    @Override
    public String getName() {
        return "locks_get_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_locks/{key}"), new Route(GET, "/_locks"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String key = request.param("key");
        if (key != null) {
            return keyInfo(request, client, key, scopeParam(request));
        }
        Map<String, Object> filter = listFilter(request);
        TransportListLocksAction.Request list =
                new TransportListLocksAction.Request(BridgeJson.toJson(filter), (Integer) BridgeField.SIZE.in(filter));
        return channel -> client.execute(TransportListLocksAction.TYPE, list, new RestToXContentListener<>(channel));
    }

    static String scopeParam(RestRequest request) {
        String scope = request.param("scope", "key");
        if (scope.equals("key") == false && scope.equals("tree") == false) {
            throw new IllegalArgumentException("[scope] must be one of [key, tree], got [" + scope + "]");
        }
        return scope;
    }

    /**
     * The core's {@code ListFilter} from {@code owner}, {@code prefix}, {@code after} (a previous page's
     * {@code next}) and {@code size} (1..1000, default 100).
     */
    static Map<String, Object> listFilter(RestRequest request) {
        Map<String, Object> filter = new LinkedHashMap<>();
        String owner = request.param("owner");
        String prefix = request.param("prefix");
        String after = request.param("after");
        int size = request.paramAsInt("size", DEFAULT_LIST_SIZE);
        if (size < 1 || size > MAX_LIST_SIZE) {
            throw new IllegalArgumentException("[size] must be 1.." + MAX_LIST_SIZE + ", got [" + size + "]");
        }
        if (owner != null) {
            BridgeField.OWNER.put(filter, owner);
        }
        if (prefix != null) {
            BridgeField.PREFIX.put(filter, prefix);
        }
        if (after != null) {
            BridgeField.AFTER.put(filter, ListPages.decode(after).toMap());
        }
        BridgeField.SIZE.put(filter, size);
        return filter;
    }
}
