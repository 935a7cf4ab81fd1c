package org.eslm.client.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.http.HttpHost;
import org.apache.http.util.EntityUtils;
import org.elasticsearch.client.Node;
import org.elasticsearch.client.Request;
import org.elasticsearch.client.RestClient;
import org.eslm.client.AcquireOptions;
import org.eslm.client.HeldLock;
import org.eslm.client.LockClient;
import org.eslm.client.LockClientBuilder;

/**
 * Acquires and releases one key in a loop through a cluster's nodes until a stop file appears,
 * for tests/integration/test_java_clients.py's owner-move test: the client must hide every 503
 * of a moving partition (retried within its budget), so any exception ends the run with exit
 * code 1. Alternates try-locks and queued acquires. Prints {@code ops=<n>} as it goes and {@code done ops=<n> retried=<n>} at the end.
 *
 * <p>Arguments: the stop file, the most seconds to run, then the node URLs.
 */
public final class Churn {
    private Churn() {}

    public static void main(String[] args) throws IOException {
        Path stop = Path.of(args[0]);
        long deadline =
                System.nanoTime() + Duration.ofSeconds(Long.parseLong(args[1])).toNanos();
        HttpHost[] hosts =
                Arrays.stream(args, 2, args.length).map(HttpHost::create).toArray(HttpHost[]::new);
        AtomicLong retried = new AtomicLong();
        long ops = 0;
        // A node the REST client marks dead is one it retried a request away from (its own retry,
        // on 502/503/504 or a connection failure): printed, since it is not the lock client's.
        RestClient.FailureListener marked = new RestClient.FailureListener() {
            @Override
            public void onFailure(Node node) {
                System.out.println("rest client marked " + node.getHost() + " dead");
            }
        };
        try (RestClient rest =
                        RestClient.builder(hosts).setFailureListener(marked).build();
                LockClient locks = LockClientBuilder.forRestClient(rest)
                        .owner("churn")
                        .retryBudget(Duration.ofSeconds(20))
                        .onRetry(unavailable -> retried.incrementAndGet())
                        .build()) {
            AcquireOptions options =
                    AcquireOptions.defaults().withWait(Duration.ofSeconds(20)).withLease(Duration.ofSeconds(10));
            while (!Files.exists(stop)) {
                if (System.nanoTime() > deadline) {
                    System.out.println("gave up: no stop file within " + args[1] + " s");
                    System.exit(2);
                }
                HeldLock lock = null;
                try {
                    // Alternately a try-lock (a 503 comes back at once) and a queued acquire.
                    lock = locks.acquire("java-churn", ops % 2 == 0 ? options : options.withWait(Duration.ZERO));
                    lock.close();
                    ops++;
                } catch (RuntimeException e) {
                    System.out.println("error after ops=" + ops + " (" + (ops % 2 == 0 ? "queued" : "try-lock")
                            + " acquire, retried=" + retried.get() + "): " + e);
                    System.out.println("the grant: " + describe(lock) + "; the key now: " + now(rest));
                    System.exit(1);
                }
                if (ops % 20 == 0) {
                    System.out.println("ops=" + ops);
                }
            }
        }
        System.out.println("done ops=" + ops + " retried=" + retried.get());
    }

    private static String describe(HeldLock lock) {
        return lock == null
                ? "none"
                : "token " + lock.fencingToken() + ", reentrant " + lock.isReentrant() + ", waited_ms "
                        + lock.waitedMs() + ", lease_ms " + lock.leaseMs();
    }

    private static String now(RestClient rest) {
        try {
            return EntityUtils.toString(rest.performRequest(new Request("GET", "/_locks/java-churn"))
                    .getEntity());
        } catch (IOException e) {
            return e.toString();
        }
    }
}
