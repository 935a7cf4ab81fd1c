package org.eslm.cluster;

import java.io.IOException;
import java.util.Objects;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;

/**
 * A partition's state as the core's JSON, or {@code null} when the node asked has none: the answer
 * of a hand-over ({@link PartitionHandoffAction}) and of a copy's catch-up ({@link PartitionStateAction}).
 */
public final class PartitionStateResponse extends ActionResponse {
    private final String stateJson;

    public PartitionStateResponse(String stateJson) {
        this.stateJson = stateJson;
    }

    PartitionStateResponse(StreamInput in) throws IOException {
        this.stateJson = in.readOptionalString();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeOptionalString(stateJson);
    }

    /** The state, or {@code null}. */
    public String stateJson() {
        return stateJson;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PartitionStateResponse that && Objects.equals(stateJson, that.stateJson);
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(stateJson);
    }
}
