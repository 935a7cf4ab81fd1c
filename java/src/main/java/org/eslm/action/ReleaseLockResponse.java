package org.eslm.action;

import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;

import java.io.IOException;
import java.util.Map;
import java.util.Objects;

/** A released lock: {@code {"released": true, "key", "owner", "fencing_token"}}. */
public final class ReleaseLockResponse extends ActionResponse implements ToXContentObject {
    private final String key;
    private final String owner;
    private final long fencingToken;

    public ReleaseLockResponse(String key, String owner, long fencingToken) {
        this.key = key;
        this.owner = owner;
        this.fencingToken = fencingToken;
    }

    public ReleaseLockResponse(StreamInput in) throws IOException {
        this(in.readString(), in.readString(), in.readLong());
    }

    static ReleaseLockResponse fromNative(Map<String, Object> released) {
        return new ReleaseLockResponse(
            (String) released.get("key"),
            (String) released.get("owner"),
            ((Number) released.get("fencing_token")).longValue()
        );
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeString(key);
        out.writeString(owner);
        out.writeLong(fencingToken);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        return builder.startObject()
            .field("released", true)
            .field("key", key)
            .field("owner", owner)
            .field("fencing_token", fencingToken)
            .endObject();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReleaseLockResponse that && key.equals(that.key) && owner.equals(that.owner) && fencingToken == that.fencingToken;
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, owner, fencingToken);
    }
}
