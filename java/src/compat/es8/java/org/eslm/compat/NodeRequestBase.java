package org.eslm.compat;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.transport.TransportRequest;

/**
 * Base of the per-node requests of the nodes actions (Elasticsearch 8.19). In 8.19
 * {@code TransportRequest} is the abstract base class; 9.x made it an interface and moved the
 * base to {@code AbstractTransportRequest} (the 9.x flavour extends that).
 */
public abstract class NodeRequestBase extends TransportRequest {
    protected NodeRequestBase() {}

    protected NodeRequestBase(StreamInput in) throws IOException {
        super(in);
    }
}
