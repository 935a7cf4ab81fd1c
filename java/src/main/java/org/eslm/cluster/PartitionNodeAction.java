package org.eslm.cluster;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.io.stream.Writeable;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.transport.TransportRequestOptions;

/**
 * Base of the actions that ask one named node about one partition ({@link PartitionRequest}):
 * run here when this is that node, else forwarded to it; a node that left the cluster gets
 * {@link #nodeGone}.
 */
abstract class PartitionNodeAction<Resp extends ActionResponse> extends WiredTransportAction<PartitionRequest, Resp> {
    private final Writeable.Reader<Resp> responseReader;

    PartitionNodeAction(ActionType<Resp> type, TransportWiring wiring, Writeable.Reader<Resp> responseReader) {
        this(type, wiring, PartitionRequest::new, responseReader);
    }

    /** As above, for an action whose request is read by {@code requestReader}. */
    PartitionNodeAction(
            ActionType<Resp> type,
            TransportWiring wiring,
            Writeable.Reader<PartitionRequest> requestReader,
            Writeable.Reader<Resp> responseReader) {
        super(type, wiring, requestReader);
        this.responseReader = responseReader;
    }

    /** Answers the question on the node it was asked of. */
    protected abstract void runHere(PartitionRequest request, ActionListener<Resp> listener);

    /** Answers when the node asked is no longer in the cluster. */
    protected abstract void nodeGone(String node, ActionListener<Resp> listener);

    /** How the request travels to the node asked: no timeout unless an action needs one. */
    protected TransportRequestOptions options() {
        return TransportRequestOptions.EMPTY;
    }

    @Override
    protected final void doExecute(Task task, PartitionRequest request, ActionListener<Resp> listener) {
        if (request.node.equals(clusterService.localNode().getId())) {
            runHere(request, listener);
            return;
        }
        DiscoveryNode node = clusterService.state().nodes().get(request.node);
        if (node == null) {
            nodeGone(request.node, listener);
            return;
        }
        wiring.send(node, actionName, request, options(), responseReader, listener);
    }
}
