package org.eslm.action;

import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionRequestValidationException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.xcontent.ObjectParser;
import org.elasticsearch.xcontent.ParseField;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.service.LockMode;

import java.io.IOException;
import java.util.Objects;

import static org.elasticsearch.action.ValidateActions.addValidationError;

/** {@code POST /_locks/{key}/_acquire}: try-lock {@code key} for {@code owner}. */
public final class AcquireLockRequest extends ActionRequest {
    private static final ObjectParser<AcquireLockRequest, Void> PARSER = new ObjectParser<>("lock_acquire_request");

    static {
        PARSER.declareString((r, v) -> r.owner = v, new ParseField("owner"));
        PARSER.declareString((r, v) -> r.mode = LockMode.parse(v), new ParseField("mode"));
    }

    private final String key;
    private String owner;
    private LockMode mode = LockMode.EXCLUSIVE;

    public AcquireLockRequest(String key, String owner, LockMode mode) {
        this.key = key;
        this.owner = owner;
        this.mode = Objects.requireNonNull(mode, "mode");
    }

    private AcquireLockRequest(String key) {
        this.key = key;
    }

    public AcquireLockRequest(StreamInput in) throws IOException {
        super(in);
        this.key = in.readString();
        this.owner = in.readString();
        this.mode = in.readEnum(LockMode.class);
    }

    /**
     * Parses the request body. Unknown fields and wrong types fail with the field named.
     *
     * @throws IllegalArgumentException when {@code owner} is missing
     */
    public static AcquireLockRequest fromXContent(String key, XContentParser parser) throws IOException {
        AcquireLockRequest request = PARSER.parse(parser, new AcquireLockRequest(key), null);
        RequestFields.require("owner", request.owner);
        return request;
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeString(key);
        out.writeString(owner);
        out.writeEnum(mode);
    }

    @Override
    public ActionRequestValidationException validate() {
        ActionRequestValidationException e = null;
        if (key == null) {
            e = addValidationError("[key] is required", e);
        }
        if (owner == null) {
            e = addValidationError("[owner] is required", e);
        }
        return e;
    }

    public String key() {
        return key;
    }

    public String owner() {
        return owner;
    }

    public LockMode mode() {
        return mode;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AcquireLockRequest that && key.equals(that.key) && owner.equals(that.owner) && mode == that.mode;
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, owner, mode);
    }
}
