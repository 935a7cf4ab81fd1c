package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.List;
import java.util.Map;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.common.Table;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.action.RestResponseListener;
import org.elasticsearch.rest.action.cat.AbstractCatAction;
import org.elasticsearch.rest.action.cat.RestTable;
import org.eslm.action.TransportListLocksAction;
import org.eslm.bridge.BridgeField;
import org.eslm.core.BridgeJson;
import org.eslm.service.ListedLocks;

/**
 * {@code GET /_cat/locks}: one page of held locks as a table ({@code v}, {@code h}, {@code format},
 * {@code help}, {@code owner}, {@code prefix}, {@code after}, {@code size}); the following page's cursor
 * is in the {@value #NEXT_HEADER} response header (absent on the last page), as a table has no place
 * for it.
 */
public class RestCatLocksAction extends AbstractCatAction {
    /** The response header carrying the cursor of the following page. */
    public static final String NEXT_HEADER = "X-Locks-Next";

    @Override
    public String getName() {
        return "cat_locks_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_cat/locks"));
    }

    @Override
    protected void documentation(StringBuilder sb) {
        sb.append("/_cat/locks\n");
    }

    @Override
    protected RestChannelConsumer doCatRequest(RestRequest request, NodeClient client) {
        Map<String, Object> filter = filter(request);
        TransportListLocksAction.Request list =
                new TransportListLocksAction.Request(BridgeJson.toJson(filter), (Integer) BridgeField.SIZE.in(filter));
        return channel -> client.execute(
                TransportListLocksAction.TYPE,
                list,
                new RestResponseListener<TransportListLocksAction.Response>(channel) {
                    @Override
                    public RestResponse buildResponse(TransportListLocksAction.Response response) throws Exception {
                        RestResponse rest = RestTable.buildResponse(buildTable(request, response), channel);
                        String next = response.merged().nextCursor();
                        if (next != null) {
                            rest.addHeader(NEXT_HEADER, next);
                        }
                        return rest;
                    }
                });
    }

    /** A column: its header, its {@code _cat} attributes (alias, description), the listed lock's field. */
    protected record Column(String header, String attributes, String field) {}

    private static final List<Column> COLUMNS = List.of(
            new Column("key", "alias:k;desc:lock key or tree path", "key"),
            new Column("scope", "alias:s;desc:key, tree, semaphore or election", "scope"),
            new Column("owner", "alias:o;desc:holder", "owner"),
            new Column("mode", "alias:m;desc:exclusive or shared", "mode"),
            new Column("token", "alias:t;desc:fencing token", "fencing_token"),
            new Column("lease_ms", "alias:l;desc:lease left in ms", "lease_ms"),
            new Column("held_ms", "alias:hm;desc:held for ms", "held_ms"),
            new Column("node", "alias:n;desc:node holding the lock", "node"));

    /** The table's columns, in order. */
    protected List<Column> columns() {
        return COLUMNS;
    }

    /** The core's list filter for this table. */
    protected Map<String, Object> filter(RestRequest request) {
        return RestGetLockAction.listFilter(request);
    }

    @Override
    protected Table getTableWithHeader(RestRequest request) {
        Table table = new Table().startHeaders();
        for (Column c : columns()) {
            table.addCell(c.header(), c.attributes());
        }
        return table.endHeaders();
    }

    private Table buildTable(RestRequest request, TransportListLocksAction.Response response) {
        Table table = getTableWithHeader(request);
        for (ListedLocks.Lock listed : response.merged().locks()) {
            Map<String, Object> lock = listed.asMap();
            table.startRow();
            for (Column c : columns()) {
                table.addCell(lock.get(c.field()));
            }
            table.endRow();
        }
        return table;
    }
}
