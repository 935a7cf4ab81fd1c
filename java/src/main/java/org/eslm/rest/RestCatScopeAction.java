package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.List;
import java.util.Map;
import org.elasticsearch.rest.RestRequest;
import org.eslm.bridge.BridgeField;

/**
 * {@code GET /_cat/semaphores} and {@code GET /_cat/elections}: one page of the grants of one
 * scope as a table, with the parameters and the next-page header of {@code _cat/locks} (the same
 * listing, filtered to the scope), and columns of their own (docs/API.md "Semaphores",
 * "Elections").
 */
public final class RestCatScopeAction extends RestCatLocksAction {
    private final String table;
    private final Route route;
    private final String scope;
    private final List<Column> columns;

    private RestCatScopeAction(String table, Route route, String scope, List<Column> columns) {
        this.table = table;
        this.route = route;
        this.scope = scope;
        this.columns = columns;
    }

    /** {@code _cat/semaphores}: who holds how many permits of which limit. */
    public static RestCatScopeAction semaphores() {
        return new RestCatScopeAction(
                "semaphores",
                new Route(GET, "/_cat/semaphores"),
                LockScopes.SEMAPHORE,
                List.of(
                        new Column("name", "alias:n;desc:semaphore name", "key"),
                        new Column("owner", "alias:o;desc:holder", "owner"),
                        new Column("permits", "alias:p;desc:permits held", "permits"),
                        new Column("limit", "alias:li;desc:the semaphore's limit", "limit"),
                        new Column("token", "alias:t;desc:fencing token", "fencing_token"),
                        new Column("lease_ms", "alias:l;desc:lease left in ms", "lease_ms"),
                        new Column("held_ms", "alias:hm;desc:held for ms", "held_ms"),
                        new Column("node", "alias:no;desc:node holding the semaphore", "node")));
    }

    /** {@code _cat/elections}: the elections that have a leader (a leadership is the election's grant). */
    public static RestCatScopeAction elections() {
        return new RestCatScopeAction(
                "elections",
                new Route(GET, "/_cat/elections"),
                LockScopes.ELECTION,
                List.of(
                        new Column("name", "alias:n;desc:election name", "key"),
                        new Column("leader", "alias:le;desc:the leading candidate", "owner"),
                        new Column("term", "alias:t;desc:the leadership's term (a fencing token)", "fencing_token"),
                        new Column("value", "alias:v;desc:the value the leader published", "value"),
                        new Column("lease_ms", "alias:l;desc:lease left in ms", "lease_ms"),
                        new Column("held_ms", "alias:hm;desc:leading for ms", "held_ms"),
                        new Column("node", "alias:no;desc:node holding the leadership", "node")));
    }

    @Override
    public String getName() {
        return "cat_" + table + "_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(route);
    }

    @Override
    protected void documentation(StringBuilder sb) {
        sb.append(route.getPath()).append('\n');
    }

    @Override
    protected Map<String, Object> filter(RestRequest request) {
        Map<String, Object> filter = RestGetLockAction.listFilter(request);
        BridgeField.SCOPE.put(filter, scope);
        return filter;
    }

    @Override
    protected List<Column> columns() {
        return columns;
    }
}
