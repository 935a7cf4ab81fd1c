package org.eslm.cluster;

import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.ActionListenerResponseHandler;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.io.stream.Writeable;
import org.elasticsearch.common.util.concurrent.EsExecutors;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.transport.TransportRequest;
import org.elasticsearch.transport.TransportRequestOptions;
import org.elasticsearch.transport.TransportResponse;
import org.elasticsearch.transport.TransportResponseHandler;
import org.elasticsearch.transport.TransportService;

/**
 * What every transport action of the plugin is built from: the transport service, the action
 * filters and the cluster service. Injected as one (Elasticsearch's injector builds it on demand
 * from its {@code @Inject} constructor), so each action's constructor names one parameter for
 * them and only adds what is its own (the lock service, the partition manager). It is also the
 * one way those actions send a request to another node ({@link #send}, {@link #sendChild}).
 *
 * <p>It lives in {@code org.eslm.cluster}, the lowest package with transport actions, so that
 * {@code org.eslm.action} may use it too (docs/ARCHITECTURE.md: the packages are layered).
 */
public record TransportWiring(
        TransportService transportService, ActionFilters actionFilters, ClusterService clusterService) {
    @Inject
    public TransportWiring {}

    /**
     * Sends {@code request} for {@code action} to {@code node} and completes {@code listener} with
     * the answer, read by {@code reader} on the thread that receives it: the plugin's listeners
     * never block, so the answer is not forked to another pool.
     */
    public <R extends TransportResponse> void send(
            DiscoveryNode node,
            String action,
            TransportRequest request,
            TransportRequestOptions options,
            Writeable.Reader<R> reader,
            ActionListener<R> listener) {
        transportService.sendRequest(node, action, request, options, answerTo(listener, reader));
    }

    /** {@link #send} as a child request of {@code parent}, so cancelling the parent cancels it. */
    public <R extends TransportResponse> void sendChild(
            DiscoveryNode node,
            String action,
            TransportRequest request,
            Task parent,
            Writeable.Reader<R> reader,
            ActionListener<R> listener) {
        sendChild(node, action, request, parent, TransportRequestOptions.EMPTY, reader, listener);
    }

    /** {@link #sendChild} with {@code options} (e.g. how long to wait for the answer). */
    public <R extends TransportResponse> void sendChild(
            DiscoveryNode node,
            String action,
            TransportRequest request,
            Task parent,
            TransportRequestOptions options,
            Writeable.Reader<R> reader,
            ActionListener<R> listener) {
        transportService.sendChildRequest(node, action, request, parent, options, answerTo(listener, reader));
    }

    private static <R extends TransportResponse> TransportResponseHandler<R> answerTo(
            ActionListener<R> listener, Writeable.Reader<R> reader) {
        return new ActionListenerResponseHandler<>(listener, reader, EsExecutors.DIRECT_EXECUTOR_SERVICE);
    }
}
