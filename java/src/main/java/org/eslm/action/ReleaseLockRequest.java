package org.eslm.action;

import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionRequestValidationException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.xcontent.ObjectParser;
import org.elasticsearch.xcontent.ParseField;
import org.elasticsearch.xcontent.XContentParser;

import java.io.IOException;
import java.util.Objects;

import static org.elasticsearch.action.ValidateActions.addValidationError;

/** {@code POST /_locks/{key}/_release}: the holder {@code owner} frees {@code key} (only that grant when a token is given). */
public final class ReleaseLockRequest extends ActionRequest {
    private static final ObjectParser<ReleaseLockRequest, Void> PARSER = new ObjectParser<>("lock_release_request");

    static {
        PARSER.declareString((r, v) -> r.owner = v, new ParseField("owner"));
        PARSER.declareLong((r, v) -> r.fencingToken = v, new ParseField("fencing_token"));
    }

    private final String key;
    private String owner;
    private Long fencingToken;

    public ReleaseLockRequest(String key, String owner, Long fencingToken) {
        this.key = key;
        this.owner = owner;
        this.fencingToken = fencingToken;
    }

    private ReleaseLockRequest(String key) {
        this.key = key;
    }

    public ReleaseLockRequest(StreamInput in) throws IOException {
        super(in);
        this.key = in.readString();
        this.owner = in.readString();
        this.fencingToken = in.readOptionalLong();
    }

    /** Parses the body; {@code owner} is required. */
    public static ReleaseLockRequest fromXContent(String key, XContentParser parser) throws IOException {
        ReleaseLockRequest request = PARSER.parse(parser, new ReleaseLockRequest(key), null);
        RequestFields.require("owner", request.owner);
        if (request.fencingToken != null && request.fencingToken < 0) {
            throw new IllegalArgumentException("[fencing_token] must not be negative, got [" + request.fencingToken + "]");
        }
        return request;
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeString(key);
        out.writeString(owner);
        out.writeOptionalLong(fencingToken);
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

    public Long fencingToken() {
        return fencingToken;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReleaseLockRequest that
            && key.equals(that.key)
            && owner.equals(that.owner)
            && Objects.equals(fencingToken, that.fencingToken);
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, owner, fencingToken);
    }
}
