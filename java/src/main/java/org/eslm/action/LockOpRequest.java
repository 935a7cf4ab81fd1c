package org.eslm.action;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionRequestValidationException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.tasks.CancellableTask;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.tasks.TaskId;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;
import org.eslm.service.SessionIds;

/**
 * One lock operation, already parsed and validated by its REST handler.
 *
 * <p>What Java itself reads — to route, to budget the routing, to cancel, to log — is a typed
 * field: the routing value, the lock key, the routing values of a multi-lock's keys, the session
 * id, the wait, a force-release reason, the partition. The op's other arguments for the core
 * (owner, mode, lease, the lock list, ...) stay a map (strings, numbers, lists, maps) until the owner node
 * hands them to the core in {@link #args()}, so JSON text is written once per request, at the
 * bridge (docs/ARCHITECTURE.md "The bridge").
 *
 * <p>Requests that may wait create a {@link CancellableTask}, so that a client that goes away
 * (the REST layer runs them through {@code RestCancellableNodeClient}) cancels its waiter.
 */
public final class LockOpRequest extends ActionRequest {
    /** {@link #waitMs()} of a request that names no wait (the core applies its own rule: none). */
    public static final long NO_WAIT = -1;
    /** {@link #partition()} of a request the coordinating node has not routed yet. */
    public static final int UNROUTED = -1;
    /** The core's name of the scope of a group's members (docs/LOCK_CORE.md "Groups"). */
    public static final String GROUP_SCOPE = "group";

    private final NativeOp op;
    private final String routingValue;
    private final String key;
    private final List<String> lockRoutingValues;
    private final String session;
    private final long waitMs;
    private final String reason;
    private final boolean waits;
    private final int partition;
    private final Map<String, Object> opArgs;

    private LockOpRequest(Fields f) {
        this.op = Objects.requireNonNull(f.op, "op");
        this.routingValue = f.routingValue;
        this.key = f.key;
        this.lockRoutingValues = List.copyOf(f.lockRoutingValues);
        this.session = f.session;
        this.waitMs = f.waitMs;
        this.reason = f.reason;
        this.waits = f.waits;
        this.partition = f.partition;
        this.opArgs = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(f.opArgs, "opArgs")));
    }

    /** The fields of a request, for building one and for copies with a few changed. */
    private static final class Fields {
        NativeOp op;
        String routingValue;
        String key;
        List<String> lockRoutingValues = List.of();
        String session;
        long waitMs = NO_WAIT;
        String reason;
        boolean waits;
        int partition = UNROUTED;
        Map<String, Object> opArgs = Map.of();
    }

    /**
     * A request from the core's arguments {@code args} (their names are {@link BridgeField}'s): the
     * key, the session, the wait and a force-release's reason are taken out into typed fields, the
     * rest are the op's arguments.
     *
     * @param routingValue the value the request routes by ({@link RoutingValues}); {@code null} for node-local reads
     */
    public static LockOpRequest of(NativeOp op, String routingValue, Map<String, ?> args) {
        return new LockOpRequest(fieldsOf(op, routingValue, args));
    }

    private static Fields fieldsOf(NativeOp op, String routingValue, Map<String, ?> args) {
        Map<String, Object> rest = new LinkedHashMap<>(args);
        Fields f = new Fields();
        f.op = op;
        f.routingValue = routingValue;
        f.key = (String) rest.remove(BridgeField.KEY.key());
        f.session = (String) rest.remove(BridgeField.SESSION.key());
        f.lockRoutingValues = lockRoutingValues(BridgeField.LOCKS.in(rest));
        f.waitMs = rest.remove(BridgeField.WAIT_MS.key()) instanceof Number wait ? wait.longValue() : NO_WAIT;
        f.waits = f.waitMs > 0;
        f.reason = (String) rest.remove(BridgeField.REASON.key());
        f.opArgs = rest;
        return f;
    }

    /**
     * A request from what the core made of a REST body ({@code {"args", "routing"?}}, see
     * {@code org.eslm.rest.RequestBodies}): routed by the {@code routing} the core answers (a
     * session's, a release-all's), else by its key, or by its first lock's key (the coordinator
     * refuses a multi-lock whose keys span partitions).
     */
    @SuppressWarnings("unchecked") // the core's arguments: a JSON object, its member names strings
    public static LockOpRequest fromBody(NativeOp op, Map<String, Object> parsed) {
        Fields f = fieldsOf(op, (String) BridgeField.ROUTING.in(parsed), (Map<String, ?>) BridgeField.ARGS.in(parsed));
        if (f.routingValue == null) {
            f.routingValue = f.lockRoutingValues.isEmpty()
                    ? RoutingValues.of(f.key, (String) BridgeField.SCOPE.in(f.opArgs))
                    : f.lockRoutingValues.get(0);
        }
        return new LockOpRequest(f);
    }

    /** What each item of a multi-lock's {@code locks} routes by on its own (see {@link RoutingValues}). */
    private static List<String> lockRoutingValues(Object locks) {
        List<String> values = new ArrayList<>();
        if (locks instanceof List<?> items) {
            for (Object item : items) {
                Map<?, ?> lock = (Map<?, ?>) item;
                values.add(RoutingValues.of(
                        String.valueOf(BridgeField.KEY.in(lock)), (String) BridgeField.SCOPE.in(lock)));
            }
        }
        return values;
    }

    private Fields fields() {
        Fields f = new Fields();
        f.op = op;
        f.routingValue = routingValue;
        f.key = key;
        f.lockRoutingValues = lockRoutingValues;
        f.session = session;
        f.waitMs = waitMs;
        f.reason = reason;
        f.waits = waits;
        f.partition = partition;
        f.opArgs = opArgs;
        return f;
    }

    /** This request routed to {@code partition}, with the wait it has left ({@link #NO_WAIT} if it named none). */
    public LockOpRequest routed(int partition, long waitLeftMs) {
        Fields f = fields();
        f.partition = partition;
        f.waitMs = waitLeftMs;
        LockOpRequest routed = new LockOpRequest(f);
        routed.setParentTask(getParentTask());
        return routed;
    }

    /** This request with one more argument for the core (e.g. the token of the grant a retried release must end). */
    public LockOpRequest withOpArg(String name, Object value) {
        Map<String, Object> args = new LinkedHashMap<>(opArgs);
        args.put(name, value);
        return withOpArgs(args);
    }

    /** This request with the core's arguments {@code args} instead of its own. */
    private LockOpRequest withOpArgs(Map<String, Object> args) {
        Fields f = fields();
        f.opArgs = args;
        LockOpRequest copy = new LockOpRequest(f);
        copy.setParentTask(getParentTask());
        return copy;
    }

    /**
     * This request as a node of an older plugin reads it: without the acquisition id, and without
     * the tokens of a multi-release's locks, which that node's core would refuse as unknown fields
     * (docs/API.md "Acquisitions", rolling upgrades). Such an owner serves it as it always did.
     */
    public LockOpRequest withoutAcquisitions() {
        Map<String, Object> args = new LinkedHashMap<>(opArgs);
        args.remove(BridgeField.ACQUISITION.key());
        if (BridgeField.LOCKS.in(args) instanceof List<?> locks) {
            List<Object> plain = new ArrayList<>(locks.size());
            for (Object item : locks) {
                Map<?, ?> lock = (Map<?, ?>) item;
                Map<Object, Object> copy = new LinkedHashMap<>(lock);
                copy.remove(BridgeField.FENCING_TOKEN.key());
                plain.add(copy);
            }
            BridgeField.LOCKS.put(args, plain);
        }
        return withOpArgs(args);
    }

    public LockOpRequest(StreamInput in) throws IOException {
        super(in);
        this.op = NativeOp.fromCode(in.readVInt());
        this.routingValue = in.readOptionalString();
        this.key = in.readOptionalString();
        this.lockRoutingValues = in.readStringCollectionAsImmutableList();
        this.session = in.readOptionalString();
        this.waitMs = in.readZLong();
        this.reason = in.readOptionalString();
        this.waits = in.readBoolean();
        this.partition = in.readInt();
        this.opArgs = Collections.unmodifiableMap(in.readGenericMap());
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeVInt(op.code()); // the op's stable number, never its declaration order
        out.writeOptionalString(routingValue);
        out.writeOptionalString(key);
        out.writeStringCollection(lockRoutingValues);
        out.writeOptionalString(session);
        out.writeZLong(waitMs);
        out.writeOptionalString(reason);
        out.writeBoolean(waits);
        out.writeInt(partition);
        out.writeGenericMap(opArgs);
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
        return "lock " + op.name().toLowerCase(Locale.ROOT) + (routingValue == null ? "" : " [" + routingValue + "]");
    }

    /** Whether this is a group request: a group op, or a membership (a lock of scope {@code group}). */
    public boolean namesGroups() {
        return switch (op) {
            case GROUP_CREATE, GROUP_DELETE, GROUP_LIST, GROUP_INFO, GROUP_UPDATE -> true;
            default -> GROUP_SCOPE.equals(BridgeField.SCOPE.in(opArgs));
        };
    }

    /**
     * The core's arguments, as the owner hands them to the core: the op's arguments with the key,
     * the session (its id inside the partition) and the wait left. A new map each time, which the
     * caller may add to (the lock service adds its request id).
     *
     * @throws org.eslm.core.SessionNotFoundException when the session id names no partition
     */
    public Map<String, Object> args() {
        Map<String, Object> args = new LinkedHashMap<>(opArgs);
        if (key != null) {
            BridgeField.KEY.put(args, key);
        }
        if (session != null) {
            BridgeField.SESSION.put(args, op == NativeOp.SESSION_CREATE ? session : SessionIds.local(session));
        }
        if (waitMs != NO_WAIT) {
            BridgeField.WAIT_MS.put(args, waitMs);
        }
        if (reason != null && op == NativeOp.FORCE_RELEASE) {
            BridgeField.REASON.put(args, reason); // for the node's log and the lock history
        }
        return args;
    }

    public NativeOp op() {
        return op;
    }

    /** The value this request routes by; {@code null} for node-local reads. */
    public String routingValue() {
        return routingValue;
    }

    /** The lock key of a one-key op, or {@code null}. */
    public String key() {
        return key;
    }

    /**
     * What each key of a multi-lock routes by on its own (empty for other ops): the coordinator
     * refuses a multi-lock whose keys span partitions (they need a common hash tag).
     */
    public List<String> lockRoutingValues() {
        return lockRoutingValues;
    }

    /** The session id as clients see it ({@code <partition>_<id>}), or {@code null}. */
    public String session() {
        return session;
    }

    /** The wait in milliseconds (left, once routed), or {@link #NO_WAIT}. */
    public long waitMs() {
        return waitMs;
    }

    /** A force-release's reason, or {@code null}. */
    public String reason() {
        return reason;
    }

    /** The op's own arguments for the core (read-only), without the typed fields. */
    public Map<String, Object> opArgs() {
        return opArgs;
    }

    /** Whether this acquire preempts (names {@code preempt}): an admin's action, not the holder's own. */
    public boolean preempts() {
        return BridgeField.PREEMPT_MS.in(opArgs) != null;
    }

    /** Whether the request may wait (its task is then cancellable). */
    public boolean waits() {
        return waits;
    }

    /** The partition the coordinating node routed this request to, or {@link #UNROUTED}. */
    public int partition() {
        return partition;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockOpRequest that
                && op == that.op
                && Objects.equals(routingValue, that.routingValue)
                && Objects.equals(key, that.key)
                && lockRoutingValues.equals(that.lockRoutingValues)
                && Objects.equals(session, that.session)
                && waitMs == that.waitMs
                && Objects.equals(reason, that.reason)
                && waits == that.waits
                && partition == that.partition
                && opArgs.equals(that.opArgs);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                op, routingValue, key, lockRoutingValues, session, waitMs, reason, waits, partition, opArgs);
    }
}
