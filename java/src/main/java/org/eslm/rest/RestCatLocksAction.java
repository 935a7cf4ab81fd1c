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
import org.eslm.service.BridgeJson;

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
                new TransportListLocksAction.Request(BridgeJson.toJson(filter), (Integer) filter.get("size"));
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

    @Override
    protected Table getTableWithHeader(RestRequest request) {
        return new Table()
                .startHeaders()
                .addCell("key", "alias:k;desc:lock key or tree path")
                .addCell("scope", "alias:s;desc:key, tree or semaphore")
                .addCell("owner", "alias:o;desc:holder")
                .addCell("mode", "alias:m;desc:exclusive or shared")
                .addCell("token", "alias:t;desc:fencing token")
                .addCell("lease_ms", "alias:l;desc:lease left in ms")
                .addCell("held_ms", "alias:hm;desc:held for ms")
                .addCell("node", "alias:n;desc:node holding the lock")
                .endHeaders();
    }

    /** The core's list filter for this table. */
    protected Map<String, Object> filter(RestRequest request) {
        return RestGetLockAction.listFilter(request);
    }

    private Table buildTable(RestRequest request, TransportListLocksAction.Response response) {
        Table table = getTableWithHeader(request);
        for (Object l : response.merged().locks()) {
            addRow(table, (Map<?, ?>) l);
        }
        return table;
    }

    /** One listed lock as a row of {@link #getTableWithHeader}'s columns. */
    protected void addRow(Table table, Map<?, ?> lock) {
        table.startRow()
                .addCell(lock.get("key"))
                .addCell(lock.get("scope"))
                .addCell(lock.get("owner"))
                .addCell(lock.get("mode"))
                .addCell(lock.get("fencing_token"))
                .addCell(lock.get("lease_ms"))
                .addCell(lock.get("held_ms"))
                .addCell(lock.get("node"))
                .endRow();
    }
}
