package org.eslm.example;

import static org.elasticsearch.rest.RestRequest.Method.POST;

import java.io.IOException;
import java.util.List;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestChannel;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.xcontent.XContentBuilder;
import org.eslm.api.Acquire;
import org.eslm.api.Grant;
import org.eslm.api.PluginLocks;

/**
 * {@code POST /_example/guarded_job/{key}?owner=&wait=&priority=&lease=&work=}: takes the lock
 * {@code key} (queueing up to {@code wait}, at {@code priority}), renews it to {@code lease}, "works"
 * for {@code work} (a scheduled task, no thread blocked), releases it, and answers with the grant.
 * Every step is a listener: no Elasticsearch thread waits for the lock.
 */
final class RestGuardedJobAction extends BaseRestHandler {
    private final PluginLocks locks;
    private final ThreadPool threadPool;

    RestGuardedJobAction(PluginLocks locks, ThreadPool threadPool) {
        this.locks = locks;
        this.threadPool = threadPool;
    }

    @Override
    public String getName() {
        return "example_guarded_job_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(POST, "/_example/guarded_job/{key}"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String key = request.param("key");
        Acquire acquire = Acquire.owner(request.param("owner", "guarded-job"))
                .waitFor(request.paramAsTime("wait", TimeValue.ZERO))
                .priority(request.param("priority", Acquire.FOREGROUND));
        TimeValue lease = request.paramAsTime("lease", TimeValue.timeValueSeconds(30));
        TimeValue work = request.paramAsTime("work", TimeValue.timeValueMillis(100));
        return channel -> locks.acquire(
                key,
                acquire,
                ActionListener.wrap(
                        grant -> locks.renew(
                                grant,
                                lease,
                                ActionListener.wrap(
                                        renewed -> afterWork(work, () -> release(channel, grant, renewed)),
                                        e -> locks.release(grant, ActionListener.running(() -> fail(channel, e))))),
                        e -> fail(channel, e)));
    }

    /** The job's "work": here only time passing, on a scheduler rather than a sleeping thread. */
    private void afterWork(TimeValue work, Runnable then) {
        threadPool.schedule(then, work, threadPool.generic());
    }

    private void release(RestChannel channel, Grant grant, Grant renewed) {
        locks.release(renewed, ActionListener.wrap(done -> answer(channel, grant, renewed), e -> fail(channel, e)));
    }

    private static void answer(RestChannel channel, Grant grant, Grant renewed) throws IOException {
        XContentBuilder body = channel.newBuilder()
                .startObject()
                .field("key", grant.key())
                .field("owner", grant.owner())
                .field("fencing_token", grant.fencingToken())
                .field("waited_ms", grant.waitedMs())
                .field("renewed_lease_ms", renewed.leaseMs())
                .field("released", true)
                .endObject();
        channel.sendResponse(new RestResponse(RestStatus.OK, body));
    }

    private static void fail(RestChannel channel, Exception e) {
        try {
            channel.sendResponse(new RestResponse(channel, e));
        } catch (IOException inner) {
            inner.addSuppressed(e);
            throw new java.io.UncheckedIOException(inner);
        }
    }
}
