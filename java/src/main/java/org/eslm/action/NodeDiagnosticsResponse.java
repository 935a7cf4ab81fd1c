package org.eslm.action;

import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;

import java.io.IOException;
import java.util.Map;
import java.util.Objects;

/**
 * {@code {"node": {"id", "name"}, "plugin": {...build info...}, "core": {...from Rust...}}}. The
 * {@code core} object is passed through as the core reports it, so new core facts need no Java change.
 */
public final class NodeDiagnosticsResponse extends ActionResponse implements ToXContentObject {
    private final String nodeId;
    private final String nodeName;
    private final Map<String, Object> plugin;
    private final Map<String, Object> core;

    public NodeDiagnosticsResponse(String nodeId, String nodeName, Map<String, Object> plugin, Map<String, Object> core) {
        this.nodeId = nodeId;
        this.nodeName = nodeName;
        this.plugin = Map.copyOf(plugin);
        this.core = Map.copyOf(core);
    }

    public NodeDiagnosticsResponse(StreamInput in) throws IOException {
        this(in.readString(), in.readString(), in.readGenericMap(), in.readGenericMap());
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeString(nodeId);
        out.writeString(nodeName);
        out.writeGenericMap(plugin);
        out.writeGenericMap(core);
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        return builder.startObject()
            .startObject("node")
            .field("id", nodeId)
            .field("name", nodeName)
            .endObject()
            .field("plugin", plugin)
            .field("core", core)
            .endObject();
    }

    public Map<String, Object> core() {
        return core;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NodeDiagnosticsResponse that
            && nodeId.equals(that.nodeId)
            && nodeName.equals(that.nodeName)
            && plugin.equals(that.plugin)
            && core.equals(that.core);
    }

    @Override
    public int hashCode() {
        return Objects.hash(nodeId, nodeName, plugin, core);
    }
}
