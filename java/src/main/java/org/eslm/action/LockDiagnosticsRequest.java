package org.eslm.action;

import java.util.Arrays;
import org.eslm.compat.NodesRequestBase;

/**
 * {@code GET /_locks/_diagnostics}: the node diagnostics of every node (or of the nodes named).
 * Runs on the node that received it only; each node gets a {@link WholeReportNodeRequest}.
 */
public final class LockDiagnosticsRequest extends NodesRequestBase<LockDiagnosticsRequest> {
    public LockDiagnosticsRequest(String... nodeIds) {
        super(nodeIds);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockDiagnosticsRequest that && Arrays.equals(nodesIds(), that.nodesIds());
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(nodesIds());
    }
}
