package org.eslm.action;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.FailedNodeException;
import org.elasticsearch.action.support.nodes.BaseNodesResponse;
import org.elasticsearch.cluster.ClusterName;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.XContentType;
import org.eslm.cluster.PartitionTable;
import org.eslm.cluster.TransportWiring;
import org.eslm.compat.NodeRequestBase;
import org.eslm.compat.NodesRequestBase;
import org.eslm.core.LockPartitionUnavailableException;
import org.eslm.service.ListedLocks;
import org.eslm.service.LockService;

/**
 * {@code cluster:monitor/locks/list}: one page of the held locks of the whole cluster. Every node's
 * core answers one bounded page per partition it serves (filtered by owner / key prefix, after the
 * request's cursor, at most {@code size}); {@link ListPages} merges them in (key, scope, owner) order
 * and computes the cursor of the following page. Each node answers asynchronously: its core's
 * answer completes the node's listener, no thread waits for it.
 */
public final class TransportListLocksAction
        extends LockNodesAction<
                TransportListLocksAction.Request,
                TransportListLocksAction.Response,
                TransportListLocksAction.NodeRequest,
                TransportListLocksAction.NodeResponse> {

    public static final ActionType<Response> TYPE = new ActionType<>(LockActionNames.LIST);

    /**
     * The pool each node lists on: one thread, so listing takes at most one core whatever the
     * number of listers (docs/ARCHITECTURE.md "Listing").
     */
    public static final String EXECUTOR = "locks_listing";

    private final ListingPace pace = new ListingPace(System.nanoTime());

    @Inject
    public TransportListLocksAction(TransportWiring wiring, LockService locks) {
        super(TYPE, wiring, NodeRequest::new, EXECUTOR, locks);
    }

    /**
     * The filter as the core's {@code ListFilter} JSON. Runs on the node that received it only
     * (Elasticsearch never sends a nodes request itself; each node gets a {@link NodeRequest}).
     */
    public static final class Request extends NodesRequestBase<Request> {
        final String filterJson;
        final int size;

        public Request(String filterJson, int size) {
            super(new String[0]);
            this.filterJson = filterJson;
            this.size = size;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Request that && filterJson.equals(that.filterJson) && size == that.size;
        }

        @Override
        public int hashCode() {
            return Objects.hash(filterJson, size);
        }
    }

    public static final class NodeRequest extends NodeRequestBase {
        final String filterJson;

        NodeRequest(String filterJson) {
            this.filterJson = Objects.requireNonNull(filterJson);
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

        @Override
        public boolean equals(Object o) {
            return o instanceof NodeRequest that && filterJson.equals(that.filterJson);
        }

        @Override
        public int hashCode() {
            return filterJson.hashCode();
        }
    }

    /** One node's pages of held locks, one per partition it serves, as its core listed them. */
    public static final class NodeResponse extends NodeCoreResponse<List<ListedLocks.Page>> {
        NodeResponse(DiscoveryNode node, List<ListedLocks.Page> pages) {
            super(node, pages, NodeResponse::writePages);
        }

        NodeResponse(StreamInput in, DiscoveryNode node) throws IOException {
            super(in, node, i -> i.readCollectionAsList(NodeResponse::readPage), NodeResponse::writePages);
        }

        private static void writePages(StreamOutput out, List<ListedLocks.Page> pages) throws IOException {
            out.writeCollection(pages, (o, page) -> {
                o.writeVInt(page.partition());
                o.writeBoolean(page.next() != null);
                if (page.next() != null) {
                    writePosition(o, page.next());
                }
                o.writeCollection(page.locks(), (l, lock) -> {
                    writePosition(l, lock);
                    l.writeBytesReference(lock.json());
                });
            });
        }

        private static ListedLocks.Page readPage(StreamInput in) throws IOException {
            int partition = in.readVInt();
            ListedLocks.Cursor next =
                    in.readBoolean() ? new ListedLocks.Cursor(in.readString(), in.readString(), in.readString()) : null;
            List<ListedLocks.Lock> locks = in.readCollectionAsList(
                    i -> new ListedLocks.Lock(i.readString(), i.readString(), i.readString(), i.readBytesReference()));
            return new ListedLocks.Page(partition, locks, next);
        }

        private static void writePosition(StreamOutput out, ListedLocks.Position position) throws IOException {
            out.writeString(position.key());
            out.writeString(position.scope());
            out.writeString(position.owner());
        }
    }

    /** {@code {"locks": [...], "next": ...}}: the nodes' pages merged by {@link ListPages}. */
    public static final class Response extends BaseNodesResponse<NodeResponse> implements ToXContentObject {
        private final int size;
        private ListPages.Merged merged;

        Response(ClusterName clusterName, List<NodeResponse> nodes, List<FailedNodeException> failures, int size) {
            super(clusterName, nodes, failures);
            this.size = size;
        }

        Response(StreamInput in) throws IOException {
            super(in);
            this.size = in.readVInt();
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeVInt(size);
        }

        @Override
        protected List<NodeResponse> readNodesFrom(StreamInput in) throws IOException {
            return in.readCollectionAsList(i -> new NodeResponse(i, null));
        }

        @Override
        protected void writeNodesTo(StreamOutput out, List<NodeResponse> nodes) throws IOException {
            out.writeCollection(nodes);
        }

        /** The merged page: at most {@code size} locks in listing order, and the following page's cursor. */
        public synchronized ListPages.Merged merged() {
            if (merged == null) {
                List<ListedLocks.Page> pages = new ArrayList<>();
                for (NodeResponse node : getNodes()) {
                    pages.addAll(node.payload());
                }
                merged = ListPages.merge(pages, size);
            }
            return merged;
        }

        @Override
        public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
            builder.startObject();
            if (hasFailures()) {
                builder.field("failed_nodes", failures().size());
            }
            ListPages.Merged page = merged();
            // The locks as the core wrote them: no map is built per lock (ListedLocks).
            builder.rawField("locks", ListPages.jsonArray(page.locks()).streamInput(), XContentType.JSON);
            return builder.field("next", page.nextCursor()).endObject();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Response that
                    && getClusterName().equals(that.getClusterName())
                    && getNodes().equals(that.getNodes())
                    && NodesFailures.same(failures(), that.failures())
                    && size == that.size;
        }

        @Override
        public int hashCode() {
            return Objects.hash(getClusterName(), getNodes(), size);
        }
    }

    /**
     * The merged answer, or 503 when a partition has no page: its owner did not answer, is not
     * confirmed by the master (it may be cut off, docs/ARCHITECTURE.md "Cut-off owners"), or the
     * partition is moving. A listing that left a partition out would look whole and hide its locks.
     */
    @Override
    protected Response newResponse(Request request, List<NodeResponse> nodes, List<FailedNodeException> failures) {
        PartitionTable table = PartitionTable.of(clusterService.state());
        Set<Integer> missing = new TreeSet<>();
        for (int p = 0; table != null && p < table.size(); p++) {
            missing.add(p);
        }
        for (NodeResponse node : nodes) {
            node.payload().forEach(page -> missing.remove(page.partition()));
        }
        if (missing.isEmpty() == false) {
            throw new LockPartitionUnavailableException(
                    "lock partitions " + missing + " have no confirmed owner that answered the listing"
                            + (failures.isEmpty() ? "" : " (" + failures.size() + " nodes failed)") + "; retry",
                    0);
        }
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

    /**
     * Asks this node's core for the locks of the partitions it serves; answers when the core does.
     * A page that comes too soon after the last is started later ({@link ListingPace}), by the
     * thread pool's scheduler: no thread waits for its turn.
     */
    @Override
    protected void nodeOperationAsync(NodeRequest request, Task task, ActionListener<NodeResponse> listener) {
        long delay = pace.delayMillis(System.nanoTime());
        if (delay > 0) {
            ThreadPool threadPool = transportService.getThreadPool();
            threadPool.schedule(
                    () -> nodeOperationAsync(request, task, listener),
                    TimeValue.timeValueMillis(delay),
                    threadPool.executor(EXECUTOR));
            return;
        }
        long start = System.nanoTime();
        locks.list(
                request.filterJson,
                ActionListener.runAfter(
                        listener.map(pages -> new NodeResponse(clusterService.localNode(), pages)),
                        () -> pace.pageTook(
                                start, System.nanoTime(), locks.settings().listingMaxBusy())));
    }

    /** Never called: {@link #nodeOperationAsync} answers without blocking a thread. */
    @Override
    protected NodeResponse nodeOperation(NodeRequest request, Task task) {
        throw new UnsupportedOperationException("the list node operation is asynchronous");
    }
}
