package org.eslm.action;

import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.FailedNodeException;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.action.support.PlainActionFuture;
import org.elasticsearch.action.support.nodes.BaseNodeResponse;
import org.elasticsearch.action.support.nodes.BaseNodesRequest;
import org.elasticsearch.action.support.nodes.BaseNodesResponse;
import org.elasticsearch.action.support.nodes.TransportNodesAction;
import org.elasticsearch.cluster.ClusterName;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.transport.AbstractTransportRequest;
import org.elasticsearch.transport.TransportService;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;
import org.eslm.bridge.NativeOp;
import org.eslm.service.LockService;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * {@code cluster:monitor/locks/list}: held locks of the whole cluster, gathered from every node's
 * core (each owner lists the partitions it serves), filtered by owner / key prefix, sorted by
 * key and owner, at most {@code size}.
 */
public final class TransportListLocksAction extends TransportNodesAction<
    TransportListLocksAction.Request,
    TransportListLocksAction.Response,
    TransportListLocksAction.NodeRequest,
    TransportListLocksAction.NodeResponse,
    Void> {

    public static final ActionType<Response> TYPE = new ActionType<>("cluster:monitor/locks/list");

    private final LockService locks;

    @Inject
    public TransportListLocksAction(
        ThreadPool threadPool,
        ClusterService clusterService,
        TransportService transportService,
        ActionFilters actionFilters,
        LockService locks
    ) {
        super(TYPE.name(), clusterService, transportService, actionFilters, NodeRequest::new, threadPool.executor(ThreadPool.Names.MANAGEMENT));
        this.locks = locks;
    }

    /** The filter as the core's {@code ListFilter} JSON. */
    public static final class Request extends BaseNodesRequest {
        final String filterJson;
        final int size;

        public Request(String filterJson, int size) {
            super(Strings.EMPTY);
            this.filterJson = filterJson;
            this.size = size;
        }
    }

    private static final class Strings {
        static final String[] EMPTY = new String[0];
    }

    public static final class NodeRequest extends AbstractTransportRequest {
        final String filterJson;

        NodeRequest(String filterJson) {
            this.filterJson = filterJson;
        }

        NodeRequest(StreamInput in) throws IOException {
            super(in);
            this.filterJson = in.readString();
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeString(filterJson);
        }
    }

    public static final class NodeResponse extends BaseNodeResponse {
        final List<Map<String, Object>> locks;

        NodeResponse(DiscoveryNode node, List<Map<String, Object>> locks) {
            super(node);
            this.locks = locks;
        }

        NodeResponse(StreamInput in, DiscoveryNode node) throws IOException {
            super(in, node);
            this.locks = in.readCollectionAsList(StreamInput::readGenericMap);
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeCollection(locks, StreamOutput::writeGenericMap);
        }
    }

    /** {@code {"locks": [...]}}, sorted by key then owner, cut at the requested size. */
    public static final class Response extends BaseNodesResponse<NodeResponse> implements ToXContentObject {
        private final int size;

        Response(ClusterName clusterName, List<NodeResponse> nodes, List<FailedNodeException> failures, int size) {
            super(clusterName, nodes, failures);
            this.size = size;
        }

        @Override
        protected List<NodeResponse> readNodesFrom(StreamInput in) throws IOException {
            return in.readCollectionAsList(i -> new NodeResponse(i, null));
        }

        @Override
        protected void writeNodesTo(StreamOutput out, List<NodeResponse> nodes) throws IOException {
            out.writeCollection(nodes);
        }

        /** The merged list. */
        public List<Map<String, Object>> locks() {
            List<Map<String, Object>> all = new ArrayList<>();
            for (NodeResponse node : getNodes()) {
                all.addAll(node.locks);
            }
            all.sort(Comparator.comparing((Map<String, Object> l) -> String.valueOf(l.get("key"))).thenComparing(l -> String.valueOf(l.get("owner"))));
            return all.size() > size ? all.subList(0, size) : all;
        }

        @Override
        public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
            builder.startObject();
            if (hasFailures()) {
                builder.field("failed_nodes", failures().size());
            }
            return builder.field("locks", locks()).endObject();
        }
    }

    @Override
    protected Response newResponse(Request request, List<NodeResponse> nodes, List<FailedNodeException> failures) {
        return new Response(clusterService.getClusterName(), nodes, failures, request.size);
    }

    @Override
    protected NodeRequest newNodeRequest(Request request) {
        return new NodeRequest(request.filterJson);
    }

    @Override
    protected NodeResponse newNodeResponse(StreamInput in, DiscoveryNode node) throws IOException {
        return new NodeResponse(in, node);
    }

    @Override
    protected NodeResponse nodeOperation(NodeRequest request, Task task) {
        PlainActionFuture<Map<String, Object>> future = new PlainActionFuture<>();
        locks.execute(new LockOpRequest(NativeOp.LIST, null, LockService.parseJson(request.filterJson), false), task, future);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> listed = (List<Map<String, Object>>) future.actionGet().get("locks");
        return new NodeResponse(clusterService.localNode(), listed);
    }
}
