package org.eslm.action;

import java.io.IOException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.eslm.compat.NodeRequestBase;

/**
 * The per-node request of a nodes action that asks every node for its whole report and says
 * nothing else ({@code _stats}, {@code _diagnostics}): no fields, so it writes no bytes of its own.
 */
public final class WholeReportNodeRequest extends NodeRequestBase {
    public WholeReportNodeRequest() {}

    public WholeReportNodeRequest(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WholeReportNodeRequest;
    }

    @Override
    public int hashCode() {
        return WholeReportNodeRequest.class.hashCode();
    }
}
