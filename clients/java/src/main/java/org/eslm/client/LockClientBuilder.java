package org.eslm.client;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
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
import org.elasticsearch.client.RequestOptions;
import org.elasticsearch.client.RestClient;
import org.eslm.client.errors.LockException;
import org.eslm.client.internal.Durations;
import org.eslm.client.internal.Retrier;
import org.eslm.client.internal.Transport;

/** Settings of a {@link LockClient}; every one has a default. */
public final class LockClientBuilder {
    private final RestClient restClient;
    private String owner = defaultOwner();
    private RequestOptions requestOptions = RequestOptions.DEFAULT;
    private Duration retryBudget = Duration.ofSeconds(5);
    private double renewFraction = 1.0 / 3;
    private int lossWatches = 4;
    private Executor callbackExecutor;
    private Consumer<LockException> onRetry = unavailable -> {};

    LockClientBuilder(RestClient restClient) {
        this.restClient = Objects.requireNonNull(restClient, "restClient");
    }

    /** The owner locks are taken for (default: host, process id and a random part). */
    public LockClientBuilder owner(String newOwner) {
        this.owner = newOwner;
        return this;
    }

    /** Options added to every request, e.g. headers (default {@link RequestOptions#DEFAULT}). */
    public LockClientBuilder requestOptions(RequestOptions options) {
        this.requestOptions = Objects.requireNonNull(options, "requestOptions");
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

    public LockClient build() {
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, daemon("eslm-lock-watchdog"));
        scheduler.setRemoveOnCancelPolicy(true);
        ExecutorService owned =
                callbackExecutor == null ? Executors.newCachedThreadPool(daemon("eslm-lock-client")) : null;
        Transport transport = new Transport(restClient, requestOptions, owned != null ? owned : callbackExecutor);
        Requests requests =
                new Requests(transport, new Retrier(scheduler, onRetry), Durations.millis(retryBudget, "retry_budget"));
        return new LockClient(
                new Shared(requests, scheduler, renewFraction, owned, new Semaphore(lossWatches)), owner, true);
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
