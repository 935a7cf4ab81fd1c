package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.List;
import java.util.Map;
import org.elasticsearch.rest.RestRequest;

/**
 * {@code GET /_cat/elections}: one page of the elections that have a leader, as a table, with the
 * parameters and the next-page header of {@code _cat/locks} (the same listing, filtered to scope
 * {@code election}: a leadership is the election's grant, docs/API.md "Elections").
 */
public final class RestCatElectionsAction extends RestCatLocksAction {
    private static final List<Column> COLUMNS = List.of(
            new Column("name", "alias:n;desc:election name", "key"),
            new Column("leader", "alias:le;desc:the leading candidate", "owner"),
            new Column("term", "alias:t;desc:the leadership's term (a fencing token)", "fencing_token"),
            new Column("value", "alias:v;desc:the value the leader published", "value"),
            new Column("lease_ms", "alias:l;desc:lease left in ms", "lease_ms"),
            new Column("held_ms", "alias:hm;desc:leading for ms", "held_ms"),
            new Column("node", "alias:no;desc:node holding the leadership", "node"));

    @Override
    public String getName() {
        return "cat_elections_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_cat/elections"));
    }

    @Override
    protected void documentation(StringBuilder sb) {
        sb.append("/_cat/elections\n");
    }

    @Override
    protected Map<String, Object> filter(RestRequest request) {
        Map<String, Object> filter = RestGetLockAction.listFilter(request);
        filter.put("scope", ElectionBodies.ELECTION);
        return filter;
    }

    @Override
    protected List<Column> columns() {
        return COLUMNS;
    }
}
