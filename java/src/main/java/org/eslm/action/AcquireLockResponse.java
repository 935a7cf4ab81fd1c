package org.eslm.action;

import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;
import org.eslm.service.LockMode;

import java.io.IOException;
import java.util.Map;
import java.util.Objects;

/** A granted lock: {@code {"acquired": true, "key", "owner", "mode", "fencing_token", "waited_ms", "reentrant"}}. */
public final class AcquireLockResponse extends ActionResponse implements ToXContentObject {
    private final String key;
    private final String owner;
    private final LockMode mode;
    private final long fencingToken;
    private final long waitedMs;
    private final boolean reentrant;

    public AcquireLockResponse(String key, String owner, LockMode mode, long fencingToken, long waitedMs, boolean reentrant) {
        this.key = key;
        this.owner = owner;
        this.mode = mode;
        this.fencingToken = fencingToken;
        this.waitedMs = waitedMs;
        this.reentrant = reentrant;
    }

    public AcquireLockResponse(StreamInput in) throws IOException {
        this(in.readString(), in.readString(), in.readEnum(LockMode.class), in.readLong(), in.readVLong(), in.readBoolean());
    }

    /** Builds the answer from the core's grant (parsed JSON). */
    static AcquireLockResponse fromNative(Map<String, Object> grant) {
        return new AcquireLockResponse(
            (String) grant.get("key"),
            (String) grant.get("owner"),
            LockMode.parse((String) grant.get("mode")),
            ((Number) grant.get("fencing_token")).longValue(),
            ((Number) grant.get("waited_ms")).longValue(),
            (Boolean) grant.get("reentrant")
        );
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeString(key);
        out.writeString(owner);
        out.writeEnum(mode);
        out.writeLong(fencingToken);
        out.writeVLong(waitedMs);
        out.writeBoolean(reentrant);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        return builder.startObject()
            .field("acquired", true)
            .field("key", key)
            .field("owner", owner)
            .field("mode", mode.wireName())
            .field("fencing_token", fencingToken)
            .field("waited_ms", waitedMs)
            .field("reentrant", reentrant)
            .endObject();
    }

    public long fencingToken() {
        return fencingToken;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AcquireLockResponse that
            && key.equals(that.key)
            && owner.equals(that.owner)
            && mode == that.mode
            && fencingToken == that.fencingToken
            && waitedMs == that.waitedMs
            && reentrant == that.reentrant;
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, owner, mode, fencingToken, waitedMs, reentrant);
    }
}
