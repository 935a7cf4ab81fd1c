package org.eslm.action;

import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.common.io.stream.Writeable;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;
import org.eslm.service.LockMode;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/** {@code {"key", "holders": [{"owner", "mode", "fencing_token", "held_ms", "node"}]}}; a free key has no holders. */
public final class GetLockResponse extends ActionResponse implements ToXContentObject {

    /** One holder of the key. {@code node} names the node whose core holds the lock. */
    public record Holder(String owner, LockMode mode, long fencingToken, long heldMs, String node) implements Writeable {
        Holder(StreamInput in) throws IOException {
            this(in.readString(), in.readEnum(LockMode.class), in.readLong(), in.readVLong(), in.readString());
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            out.writeString(owner);
            out.writeEnum(mode);
            out.writeLong(fencingToken);
            out.writeVLong(heldMs);
            out.writeString(node);
        }
    }

    private final String key;
    private final List<Holder> holders;

    public GetLockResponse(String key, List<Holder> holders) {
        this.key = key;
        this.holders = List.copyOf(holders);
    }

    public GetLockResponse(StreamInput in) throws IOException {
        this(in.readString(), in.readCollectionAsList(Holder::new));
    }

    /** Builds the answer from the core's key info, naming {@code node} as the holding node. */
    static GetLockResponse fromNative(Map<String, Object> info, String node) {
        List<?> raw = (List<?>) info.get("holders");
        List<Holder> holders = raw.stream().map(h -> (Map<?, ?>) h).map(h -> new Holder(
            (String) h.get("owner"),
            LockMode.parse((String) h.get("mode")),
            ((Number) h.get("fencing_token")).longValue(),
            ((Number) h.get("held_ms")).longValue(),
            node
        )).toList();
        return new GetLockResponse((String) info.get("key"), holders);
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeString(key);
        out.writeCollection(holders);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject().field("key", key).startArray("holders");
        for (Holder h : holders) {
            builder.startObject()
                .field("owner", h.owner())
                .field("mode", h.mode().wireName())
                .field("fencing_token", h.fencingToken())
                .field("held_ms", h.heldMs())
                .field("node", h.node())
                .endObject();
        }
        return builder.endArray().endObject();
    }

    public List<Holder> holders() {
        return holders;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GetLockResponse that && key.equals(that.key) && holders.equals(that.holders);
    }

    @Override
    public int hashCode() {
        return 31 * key.hashCode() + holders.hashCode();
    }
}
