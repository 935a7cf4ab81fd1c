package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.List;
import java.util.Map;
import org.elasticsearch.rest.RestRequest;

/**
 * {@code GET /_cat/semaphores}: one page of semaphore grants as a table, with the parameters and the
 * next-page header of {@code _cat/locks} (it is the same listing, filtered to scope {@code semaphore}).
 */
public final class RestCatSemaphoresAction extends RestCatLocksAction {
    private static final List<Column> COLUMNS = List.of(
            new Column("name", "alias:n;desc:semaphore name", "key"),
            new Column("owner", "alias:o;desc:holder", "owner"),
            new Column("permits", "alias:p;desc:permits held", "permits"),
            new Column("limit", "alias:li;desc:the semaphore's limit", "limit"),
            new Column("token", "alias:t;desc:fencing token", "fencing_token"),
            new Column("lease_ms", "alias:l;desc:lease left in ms", "lease_ms"),
            new Column("held_ms", "alias:hm;desc:held for ms", "held_ms"),
            new Column("node", "alias:no;desc:node holding the semaphore", "node"));

    @Override
    public String getName() {
        return "cat_semaphores_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_cat/semaphores"));
    }

    @Override
    protected void documentation(StringBuilder sb) {
        sb.append("/_cat/semaphores\n");
    }

    @Override
    protected Map<String, Object> filter(RestRequest request) {
        Map<String, Object> filter = RestGetLockAction.listFilter(request);
        filter.put("scope", LockBodies.SEMAPHORE);
        return filter;
    }

    @Override
    protected List<Column> columns() {
        return COLUMNS;
    }
}
