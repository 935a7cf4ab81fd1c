package org.eslm.client;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.eslm.client.errors.LockException;
import org.eslm.client.internal.Durations;
import org.eslm.client.internal.JsonExchange;
import org.eslm.client.internal.Rest5ClientTransport;
import org.eslm.client.internal.RestClientTransport;
import org.eslm.client.internal.Retrier;
import org.eslm.client.internal.Transport;

/**
 * Settings of a {@link LockClient}; every one has a default. The HTTP client's types appear only
 * in the methods for that client, so an application with one of the two low-level clients never
 * needs the other on its class path.
 */
public final class LockClientBuilder {
    private Transport transport;
    private Owners owners = new Owners(Owners.Kind.EACH_ACQUISITION, defaultOwner());
    private Duration retryBudget = Duration.ofSeconds(5);
    private double renewFraction = 1.0 / 3;
    private int lossWatches = 4;
    private Executor callbackExecutor;
    private Consumer<LockException> onRetry = unavailable -> {};
    private final List<LockClientListener> listeners = new ArrayList<>();

    LockClientBuilder(Transport transport) {
        this.transport = Objects.requireNonNull(transport, "transport");
    }

    /**
     * A builder over the application's legacy low-level {@code RestClient} ({@code
     * org.elasticsearch.client:elasticsearch-rest-client}), which the client does not close.
     */
    public static LockClientBuilder forRestClient(org.elasticsearch.client.RestClient restClient) {
        Objects.requireNonNull(restClient, "restClient");
        return new LockClientBuilder(
                new RestClientTransport(restClient, org.elasticsearch.client.RequestOptions.DEFAULT));
    }

    /**
     * A builder over the application's {@code Rest5Client} ({@code
     * co.elastic.clients:elasticsearch-rest5-client}), which the client does not close. With the
     * Java API client, pass {@code ((Rest5ClientTransport) esClient._transport()).restClient()}.
     * Not an overload of {@link #forRestClient}: javac would then need both clients' classes to
     * choose, and an application brings only the one it uses.
     */
    public static LockClientBuilder forRest5Client(
            co.elastic.clients.transport.rest5_client.low_level.Rest5Client restClient) {
        Objects.requireNonNull(restClient, "restClient");
        return new LockClientBuilder(new Rest5ClientTransport(
                restClient, co.elastic.clients.transport.rest5_client.low_level.RequestOptions.DEFAULT));
    }

    /**
     * One owner shared by every acquisition of the client: each acquire of a key it already holds
     * is <em>reentrant</em> (the same grant back), whichever thread asks, so threads sharing the
     * client no longer exclude each other. For a single-threaded worker whose owner must be
     * readable or stable across restarts. By default every acquisition gets an owner of its own,
     * {@code <host>/<pid>/<random>/<n>} (see {@link LockClient#reentrant()} for per-thread owners).
     */
    public LockClientBuilder owner(String sharedOwner) {
        this.owners = new Owners(Owners.Kind.SHARED, sharedOwner);
        return this;
    }

    /**
     * Options added to every request of a legacy {@code RestClient}, e.g. headers (default {@code
     * RequestOptions.DEFAULT}).
     *
     * @throws IllegalStateException if the client was built over a {@code Rest5Client}
     */
    public LockClientBuilder requestOptions(org.elasticsearch.client.RequestOptions options) {
        Objects.requireNonNull(options, "requestOptions");
        if (!(transport instanceof RestClientTransport legacy)) {
            throw new IllegalStateException("requestOptions(...) is for a RestClient; use rest5RequestOptions(...)");
        }
        this.transport = legacy.withOptions(options);
        return this;
    }

    /**
     * Options added to every request of a {@code Rest5Client}, e.g. headers (default {@code
     * RequestOptions.DEFAULT}).
     *
     * @throws IllegalStateException if the client was built over a legacy {@code RestClient}
     */
    public LockClientBuilder rest5RequestOptions(
            co.elastic.clients.transport.rest5_client.low_level.RequestOptions options) {
        Objects.requireNonNull(options, "requestOptions");
        if (!(transport instanceof Rest5ClientTransport rest5)) {
            throw new IllegalStateException("rest5RequestOptions(...) is for a Rest5Client; use requestOptions(...)");
        }
        this.transport = rest5.withOptions(options);
        return this;
    }

    /**
     * Wraps the transport, for tests that must see or delay what really goes over the wire (e.g.
     * an answer delivered late): the requests still reach the node.
     */
    LockClientBuilder wrapTransport(UnaryOperator<Transport> wrapper) {
        this.transport = Objects.requireNonNull(wrapper.apply(transport), "transport");
        return this;
    }

    /**
     * How long a call without a wait of its own (try-lock, renew, release, session calls) keeps
     * retrying a 503 {@code lock_partition_unavailable_exception} (default 5 s; zero: never). A
     * queued acquire retries within its own wait instead, never beyond it.
     */
    public LockClientBuilder retryBudget(Duration budget) {
        Durations.millis(budget, "retry_budget");
        this.retryBudget = budget;
        return this;
    }

    /** The watchdog renews every {@code fraction} of a lease (default 1/3), 0 &lt; f &lt; 1. */
    public LockClientBuilder renewFraction(double fraction) {
        if (!(fraction > 0 && fraction < 1)) {
            throw new IllegalArgumentException("[renew_fraction] must be between 0 and 1, got [" + fraction + "]");
        }
        this.renewFraction = fraction;
        return this;
    }

    /**
     * How many held locks are watched at once ({@code GET /_locks/{key}/_watch}, default 4; 0:
     * none), so their loss is reported as soon as the server ends them rather than at the next
     * renewal. Each watch holds one connection of the REST client's pool (10 per route by
     * default): keep it below that. Locks beyond it rely on their renewals.
     */
    public LockClientBuilder lossWatches(int watches) {
        if (watches < 0) {
            throw new IllegalArgumentException("[loss_watches] must be >= 0, got [" + watches + "]");
        }
        this.lossWatches = watches;
        return this;
    }

    /**
     * Where answers are completed, and lost-lock listeners run (default: the client's own daemon
     * threads). Never the REST client's I/O thread, which a blocking continuation would stall.
     */
    public LockClientBuilder callbackExecutor(Executor executor) {
        this.callbackExecutor = Objects.requireNonNull(executor, "callbackExecutor");
        return this;
    }

    /**
     * Told of every 503 {@code lock_partition_unavailable_exception} the client is about to retry,
     * e.g. to count them: the caller sees only the final outcome. Runs on a client thread.
     */
    public LockClientBuilder onRetry(Consumer<LockException> observer) {
        this.onRetry = Objects.requireNonNull(observer, "onRetry");
        return this;
    }

    /**
     * Adds a listener told of the client's grants, failed acquires, renewals, losses and releases
     * ({@link LockClientListener}), e.g. to count them as metrics. Listeners are told in the order
     * they were added, on client threads.
     */
    public LockClientBuilder listener(LockClientListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
        return this;
    }

    public LockClient build() {
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, daemon("eslm-lock-watchdog"));
        scheduler.setRemoveOnCancelPolicy(true);
        ExecutorService owned =
                callbackExecutor == null ? Executors.newCachedThreadPool(daemon("eslm-lock-client")) : null;
        JsonExchange exchange = new JsonExchange(transport, owned != null ? owned : callbackExecutor);
        Requests requests =
                new Requests(exchange, new Retrier(scheduler, onRetry), Durations.millis(retryBudget, "retry_budget"));
        return new LockClient(
                new Shared(
                        requests,
                        scheduler,
                        renewFraction,
                        owned,
                        new Semaphore(lossWatches),
                        new Handles(),
                        new Events(listeners),
                        new Holdings()),
                owners,
                true);
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** {@code host/pid/random}: distinct per client, readable in {@code GET /_cat/locks}. */
    static String defaultOwner() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "unknown-host";
        }
        return host + "/" + ProcessHandle.current().pid() + "/"
                + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
    }
}
