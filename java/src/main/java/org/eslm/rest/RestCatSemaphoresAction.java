package org.eslm.rest;

import static org.elasticsearch.rest.RestRequest.Method.GET;

import java.util.List;
import java.util.Map;
import org.elasticsearch.common.Table;
import org.elasticsearch.rest.RestRequest;

/**
 * {@code GET /_cat/semaphores}: one page of semaphore grants as a table, with the parameters and the
 * next-page header of {@code _cat/locks} (it is the same listing, filtered to scope {@code semaphore}).
 */
public final class RestCatSemaphoresAction extends RestCatLocksAction {
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
    protected Table getTableWithHeader(RestRequest request) {
        return new Table()
                .startHeaders()
                .addCell("name", "alias:n;desc:semaphore name")
                .addCell("owner", "alias:o;desc:holder")
                .addCell("permits", "alias:p;desc:permits held")
                .addCell("limit", "alias:li;desc:the semaphore's limit")
                .addCell("token", "alias:t;desc:fencing token")
                .addCell("lease_ms", "alias:l;desc:lease left in ms")
                .addCell("held_ms", "alias:hm;desc:held for ms")
                .addCell("node", "alias:no;desc:node holding the semaphore")
                .endHeaders();
    }

    @Override
    protected void addRow(Table table, Map<?, ?> lock) {
        table.startRow()
                .addCell(lock.get("key"))
                .addCell(lock.get("owner"))
                .addCell(lock.get("permits"))
                .addCell(lock.get("limit"))
                .addCell(lock.get("fencing_token"))
                .addCell(lock.get("lease_ms"))
                .addCell(lock.get("held_ms"))
                .addCell(lock.get("node"))
                .endRow();
    }
}
