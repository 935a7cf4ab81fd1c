package org.eslm.replication;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.ElasticsearchTimeoutException;
import org.elasticsearch.ExceptionsHelper;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionRequestValidationException;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.ClusterStateTaskExecutor;
import org.elasticsearch.cluster.ClusterStateTaskListener;
import org.elasticsearch.cluster.NotMasterException;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexRoutingTable;
import org.elasticsearch.cluster.routing.IndexShardRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.cluster.routing.allocation.AllocationService;
import org.elasticsearch.cluster.routing.allocation.FailedShard;
import org.elasticsearch.cluster.routing.allocation.StaleShard;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.cluster.service.MasterServiceTaskQueue;
import org.elasticsearch.common.Priority;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.index.shard.ShardId;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.transport.ReceiveTimeoutTransportException;
import org.eslm.cluster.TransportWiring;
import org.eslm.cluster.WiredTransportAction;
import org.eslm.compat.ProjectScope;

/**
 * {@code internal:locks/copies/fail_silent}: when a lock copy lets a batch time out, its owner asks
 * the master to fail, in <em>one</em> cluster-state update, that copy and every other lock replica
 * on the same node (docs/ARCHITECTURE.md "Silent owners").
 *
 * <p>Why one update: the master publishes a failed copy and waits up to
 * {@code cluster.publish.timeout} (30 s) for every node to apply it, and a frozen node never does.
 * Every other cluster-state update waits behind that publication, so the failure of the same
 * node's copy of another partition, asked a moment later by that partition's owner, would stop
 * that partition for those 30 s. Failed together, both are out of the in-sync set in the first
 * committed state, and each owner goes on as soon as it applied it ({@link CommittedCopyFailure}).
 *
 * <p>Failing a replica never loses a holder: the primary keeps the table and its owner keeps
 * serving. Only started replicas are failed, never a primary; the asker's own copy
 * is failed (or marked stale) only in the primary term it names, as Elasticsearch's shard-failed
 * path does. When this action fails (no master, an older master without it, a new primary), the
 * owner falls back to Elasticsearch's own shard-failed request for its copy.
 */
public final class SilentCopyFailure {
    public static final ActionType<ActionResponse.Empty> TYPE = new ActionType<>("internal:locks/copies/fail_silent");
    /**
     * How long an owner waits for the master's answer before it asks Elasticsearch's shard-failed
     * path as well (a frozen master never answers). The answer comes only after the publication,
     * which can take {@code cluster.publish.timeout}; the owner does not wait for it
     * ({@link CommittedCopyFailure}), and a second failure of a copy already failed is a no-op.
     */
    static final TimeValue ASK_TIMEOUT = TimeValue.timeValueSeconds(10);

    private static final Logger logger = LogManager.getLogger(SilentCopyFailure.class);

    private SilentCopyFailure() {}

    /** Whether a copy's failure means its node did not answer in time, rather than that it answered with an error. */
    static boolean silence(Exception e) {
        return ExceptionsHelper.unwrap(e, ElasticsearchTimeoutException.class, ReceiveTimeoutTransportException.class)
                != null;
    }

    /** "My copy {@code allocationId} of {@code shardId}, in primary term {@code primaryTerm}, did not answer." */
    public static final class Request extends ActionRequest {
        final ShardId shardId;
        final String allocationId;
        final long primaryTerm;
        final String reason;

        public Request(ShardId shardId, String allocationId, long primaryTerm, String reason) {
            this.shardId = shardId;
            this.allocationId = allocationId;
            this.primaryTerm = primaryTerm;
            this.reason = reason;
        }

        Request(StreamInput in) throws IOException {
            super(in);
            this.shardId = new ShardId(in);
            this.allocationId = in.readString();
            this.primaryTerm = in.readVLong();
            this.reason = in.readString();
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            shardId.writeTo(out);
            out.writeString(allocationId);
            out.writeVLong(primaryTerm);
            out.writeString(reason);
        }

        @Override
        public ActionRequestValidationException validate() {
            return null;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Request that
                    && shardId.equals(that.shardId)
                    && allocationId.equals(that.allocationId)
                    && primaryTerm == that.primaryTerm
                    && reason.equals(that.reason);
        }

        @Override
        public int hashCode() {
            return Objects.hash(shardId, allocationId, primaryTerm, reason);
        }

        @Override
        public String toString() {
            return "fail silent lock copy [" + allocationId + "] of " + shardId + " in term [" + primaryTerm + "]";
        }
    }

    /** What one request fails: replicas (routing entries) and copies only left to mark stale. */
    record Failures(List<ShardRouting> replicas, List<StaleShard> stale) {}

    /**
     * What {@code request} fails in {@code state}: the asker's copy, in the asker's primary term
     * (a failure otherwise: the asker is no longer the primary), and every other started lock
     * replica on the same node.
     */
    static Failures failures(ClusterState state, Request request) {
        IndexMetadata index = ProjectScope.index(state, request.shardId.getIndexName());
        IndexRoutingTable routing = ProjectScope.routing(state, request.shardId.getIndexName());
        if (index == null
                || routing == null
                || index.getIndexUUID().equals(request.shardId.getIndex().getUUID()) == false) {
            return new Failures(List.of(), List.of());
        }
        int asked = request.shardId.id();
        if (index.primaryTerm(asked) != request.primaryTerm) {
            throw new ElasticsearchException(request + ": the primary term is now [" + index.primaryTerm(asked) + "]");
        }
        ShardRouting copy = routing.shard(asked).getByAllocationId(request.allocationId);
        List<ShardRouting> replicas = new ArrayList<>();
        List<StaleShard> stale = new ArrayList<>();
        if (copy == null) {
            if (index.inSyncAllocationIds(asked).contains(request.allocationId)) {
                stale.add(new StaleShard(request.shardId, request.allocationId));
            }
            return new Failures(replicas, stale);
        }
        replicas.add(copy);
        String node = copy.currentNodeId();
        for (int shard = 0; shard < routing.size(); shard++) {
            if (shard != asked) {
                ShardRouting other = replicaToFail(routing.shard(shard), node);
                if (other != null) {
                    replicas.add(other);
                }
            }
        }
        return new Failures(replicas, stale);
    }

    /**
     * The started replica of {@code shard} on {@code node}, if any. A started replica always has an
     * active primary, on another node, which keeps the table; a primary on {@code node} is left to
     * the watch for silent owners ({@link SilentOwners}), and a recovering copy to its recovery.
     */
    static ShardRouting replicaToFail(IndexShardRoutingTable shard, String node) {
        for (ShardRouting replica : shard.replicaShards()) {
            if (replica.started() && node.equals(replica.currentNodeId())) {
                return replica;
            }
        }
        return null;
    }

    /** The master's queue: requests that arrive together are failed in one update too. */
    public static final class MasterTasks {
        private final MasterServiceTaskQueue<FailTask> queue;

        public MasterTasks(ClusterService clusterService, AllocationService allocation) {
            // HIGH, as Elasticsearch's own shard-failed tasks: a stalled partition waits on it.
            this.queue = clusterService.createTaskQueue("lock-copies-failed", Priority.HIGH, new Executor(allocation));
        }

        void submit(Request request, ActionListener<ActionResponse.Empty> listener) {
            queue.submitTask(request.toString(), new FailTask(request, listener), null);
        }
    }

    private record FailTask(Request request, ActionListener<ActionResponse.Empty> listener)
            implements ClusterStateTaskListener {
        @Override
        public void onFailure(Exception e) {
            listener.onFailure(e);
        }
    }

    private record Executor(AllocationService allocation) implements ClusterStateTaskExecutor<FailTask> {
        @Override
        public ClusterState execute(BatchExecutionContext<FailTask> batch) {
            ClusterState state = batch.initialState();
            List<FailedShard> failed = new ArrayList<>();
            List<StaleShard> stale = new ArrayList<>();
            List<String> seen = new ArrayList<>();
            for (var context : batch.taskContexts()) {
                Request request = context.getTask().request();
                try {
                    Failures failures = failures(state, request);
                    for (ShardRouting replica : failures.replicas()) {
                        String id = replica.allocationId().getId();
                        if (seen.contains(id) == false) {
                            seen.add(id);
                            String why = why(request, replica);
                            failed.add(new FailedShard(replica, why, new ElasticsearchException(why), true));
                        }
                    }
                    stale.addAll(failures.stale());
                    context.success(() -> context.getTask().listener().onResponse(ActionResponse.Empty.INSTANCE));
                } catch (Exception e) {
                    context.onFailure(e);
                }
            }
            if (failed.isEmpty() && stale.isEmpty()) {
                return state;
            }
            logger.warn("failing lock copies on a node that did not answer in time: {} (and stale {})", seen, stale);
            return allocation.applyFailedShards(state, failed, stale);
        }

        private static String why(Request request, ShardRouting replica) {
            return replica.shardId().equals(request.shardId)
                    ? "lock copy did not answer in time: " + request.reason
                    : "lock copy on node [" + replica.currentNodeId() + "], whose copy of " + request.shardId
                            + " did not answer in time: " + request.reason;
        }
    }

    /** Runs on the elected master; refuses anywhere else, and the asker falls back. */
    public static final class Transport extends WiredTransportAction<Request, ActionResponse.Empty> {
        private final MasterTasks tasks;

        @Inject
        public Transport(TransportWiring wiring, MasterTasks tasks) {
            super(TYPE, wiring, Request::new);
            this.tasks = tasks;
        }

        @Override
        protected void doExecute(Task task, Request request, ActionListener<ActionResponse.Empty> listener) {
            if (clusterService.state().nodes().isLocalNodeElectedMaster() == false) {
                listener.onFailure(new NotMasterException(
                        "node [" + clusterService.localNode().getName()
                                + "] is not the elected master; it cannot fail lock copies"));
                return;
            }
            tasks.submit(request, listener);
        }
    }
}
