package org.eslm.compat;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.transport.AbstractTransportRequest;

/**
 * Base of the per-node requests of the nodes actions (Elasticsearch 9). In 9.x
 * {@code TransportRequest} is an interface and {@code AbstractTransportRequest} its base class;
 * in 8.19 {@code TransportRequest} is itself the abstract class (the 8.19 flavour extends it).
 */
public abstract class NodeRequestBase extends AbstractTransportRequest {
    protected NodeRequestBase() {}

    protected NodeRequestBase(StreamInput in) throws IOException {
        super(in);
    }
}
