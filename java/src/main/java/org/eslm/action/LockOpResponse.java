package org.eslm.action;

import java.io.IOException;
import java.util.Map;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;
import org.eslm.core.LockException;

/**
 * The answer of a lock operation: the JSON object the REST API documents (docs/API.md), shaped
 * by {@code LockService} from the core's answer. Kept as a map so that fields the core adds reach
 * clients without a Java change.
 */
public final class LockOpResponse extends ActionResponse implements ToXContentObject {
    private final Map<String, Object> body;
    /**
     * A lock outcome computed on the owner node ({@link LockException#describe}), carried as data
     * because Elasticsearch cannot serialize plugin exception types; the coordinating node
     * rethrows it as the same typed exception, so clients see the same error on every node.
     */
    private final Map<String, Object> failure;

    public LockOpResponse(Map<String, Object> body) {
        this(body, null);
    }

    private LockOpResponse(Map<String, Object> body, Map<String, Object> failure) {
        this.body = body;
        this.failure = failure;
    }

    /** A response that carries {@code e} back to the coordinating node. */
    public static LockOpResponse failure(LockException e) {
        return new LockOpResponse(Map.of(), LockException.describe(e));
    }

    public LockOpResponse(StreamInput in) throws IOException {
        this.body = in.readGenericMap();
        this.failure = in.readBoolean() ? in.readGenericMap() : null;
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeGenericMap(body);
        out.writeBoolean(failure != null);
        if (failure != null) {
            out.writeGenericMap(failure);
        }
    }

    /** The owner's lock outcome rebuilt as its typed exception, or {@code null} for a success. */
    public LockException failureException() {
        return failure == null ? null : LockException.rebuild(failure);
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
        return o instanceof LockOpResponse that
                && body.equals(that.body)
                && java.util.Objects.equals(failure, that.failure);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(body, failure);
    }
}
