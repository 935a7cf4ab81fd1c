package org.eslm.action;

import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionRequestValidationException;
import org.elasticsearch.common.io.stream.StreamInput;

import java.io.IOException;

/** {@code GET /_locks/_node/diagnostics}: facts about the receiving node's lock manager. */
public final class NodeDiagnosticsRequest extends ActionRequest {
    public NodeDiagnosticsRequest() {}

    public NodeDiagnosticsRequest(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public ActionRequestValidationException validate() {
        return null;
    }
}
