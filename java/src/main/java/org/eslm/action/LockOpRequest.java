package org.eslm.action;

import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionRequestValidationException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.tasks.CancellableTask;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.tasks.TaskId;
import org.eslm.bridge.NativeOp;

import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One lock operation, already parsed and validated by its REST handler: the bridge op, the key it
 * routes by ({@code null} for node-wide reads) and the core's arguments. The arguments stay a map
 * (strings, numbers, lists, maps) until the owner node hands them to the core: the coordinator
 * reads {@code routing}, {@code session} and {@code wait_ms} from them, and the owner adds its
 * request id, so JSON text is written once per request, at the bridge.
 *
 * <p>Requests that may wait create a {@link CancellableTask}, so that a client that goes away
 * (the REST layer runs them through {@code RestCancellableNodeClient}) cancels its waiter.
 */
public final class LockOpRequest extends ActionRequest {
    private final NativeOp op;
    private final String key;
    private final Map<String, Object> args;
    private final boolean waits;
    /** The partition the coordinating node routed this request to; -1 before routing. */
    private final int partition;

    public LockOpRequest(NativeOp op, String key, Map<String, ?> args, boolean waits) {
        this(op, key, args, waits, -1);
    }

    public LockOpRequest(NativeOp op, String key, Map<String, ?> args, boolean waits, int partition) {
        this.op = Objects.requireNonNull(op, "op");
        this.key = key;
        this.args = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(args, "args")));
        this.waits = waits;
        this.partition = partition;
    }

    /** This request routed to {@code partition}, with (possibly updated) arguments. */
    public LockOpRequest routed(int partition, Map<String, ?> args) {
        LockOpRequest routed = new LockOpRequest(op, key, args, waits, partition);
        routed.setParentTask(getParentTask());
        return routed;
    }

    public LockOpRequest(StreamInput in) throws IOException {
        super(in);
        this.op = in.readEnum(NativeOp.class);
        this.key = in.readOptionalString();
        this.args = Collections.unmodifiableMap(in.readGenericMap());
        this.waits = in.readBoolean();
        this.partition = in.readInt();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeEnum(op);
        out.writeOptionalString(key);
        out.writeGenericMap(args);
        out.writeBoolean(waits);
        out.writeInt(partition);
    }

    @Override
    public ActionRequestValidationException validate() {
        return null; // the REST handler validated the body; the core checks the lock rules
    }

    @Override
    public Task createTask(long id, String type, String action, TaskId parentTaskId, Map<String, String> headers) {
        if (waits) {
            return new CancellableTask(id, type, action, getDescription(), parentTaskId, headers);
        }
        return super.createTask(id, type, action, parentTaskId, headers);
    }

    @Override
    public String getDescription() {
        return "lock " + op.name().toLowerCase(java.util.Locale.ROOT) + (key == null ? "" : " [" + key + "]");
    }

    public NativeOp op() {
        return op;
    }

    public String key() {
        return key;
    }

    /** The core's arguments (read-only). */
    public Map<String, Object> args() {
        return args;
    }

    public boolean waits() {
        return waits;
    }

    public int partition() {
        return partition;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockOpRequest that
            && op == that.op
            && Objects.equals(key, that.key)
            && args.equals(that.args)
            && waits == that.waits
            && partition == that.partition;
    }

    @Override
    public int hashCode() {
        return Objects.hash(op, key, args, waits, partition);
    }
}
