package org.eslm.action;

import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionRequestValidationException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;

import java.io.IOException;
import java.util.Objects;

import static org.elasticsearch.action.ValidateActions.addValidationError;

/** {@code GET /_locks/{key}}: who holds {@code key}. */
public final class GetLockRequest extends ActionRequest {
    private final String key;

    public GetLockRequest(String key) {
        this.key = key;
    }

    public GetLockRequest(StreamInput in) throws IOException {
        super(in);
        this.key = in.readString();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeString(key);
    }

    @Override
    public ActionRequestValidationException validate() {
        return key == null ? addValidationError("[key] is required", null) : null;
    }

    public String key() {
        return key;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GetLockRequest that && key.equals(that.key);
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(key);
    }
}
