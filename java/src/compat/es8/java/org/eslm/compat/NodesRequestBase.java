package org.eslm.compat;

import org.elasticsearch.action.support.nodes.BaseNodesRequest;

/**
 * Base of the nodes requests (Elasticsearch 8.19): {@code BaseNodesRequest} and
 * {@code TransportNodesAction} of 8.19 are typed by the request class itself
 * ({@code BaseNodesRequest<R extends BaseNodesRequest<R>>}); 9.x dropped that parameter (the 9.x
 * flavour passes it on to nobody).
 */
public abstract class NodesRequestBase<R extends NodesRequestBase<R>> extends BaseNodesRequest<R> {
    protected NodesRequestBase(String... nodeIds) {
        super(nodeIds);
    }
}
