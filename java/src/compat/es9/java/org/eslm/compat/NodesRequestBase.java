package org.eslm.compat;

import org.elasticsearch.action.support.nodes.BaseNodesRequest;

/**
 * Base of the nodes requests (Elasticsearch 9), self-typed so one declaration fits both majors:
 * 8.19's {@code BaseNodesRequest<R extends BaseNodesRequest<R>>} and {@code TransportNodesAction}
 * need the type parameter, 9.x's {@code BaseNodesRequest} has none.
 */
public abstract class NodesRequestBase<R extends NodesRequestBase<R>> extends BaseNodesRequest {
    protected NodesRequestBase(String... nodeIds) {
        super(nodeIds);
    }
}
