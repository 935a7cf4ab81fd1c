package org.eslm.action;

import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;

import java.io.IOException;
import java.util.Map;

/**
 * The answer of a lock operation: the JSON object the REST API documents (docs/API.md), shaped
 * by {@code LockService} from the core's answer. Kept as a map so that fields the core adds reach
 * clients without a Java change.
 */
public final class LockOpResponse extends ActionResponse implements ToXContentObject {
    private final Map<String, Object> body;

    public LockOpResponse(Map<String, Object> body) {
        this.body = body;
    }

    public LockOpResponse(StreamInput in) throws IOException {
        this.body = in.readGenericMap();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeGenericMap(body);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        return builder.map(body);
    }

    public Map<String, Object> body() {
        return body;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockOpResponse that && body.equals(that.body);
    }

    @Override
    public int hashCode() {
        return body.hashCode();
    }
}
