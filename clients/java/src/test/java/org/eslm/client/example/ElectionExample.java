package org.eslm.client.example;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.http.HttpHost;
import org.elasticsearch.client.RestClient;
import org.eslm.client.AcquireOptions;
import org.eslm.client.Election;
import org.eslm.client.ElectionState;
import org.eslm.client.LeaderLoop;
import org.eslm.client.LockClient;
import org.eslm.client.LockClientBuilder;

/**
 * The example of clients/java/README.md's "Leader elections" section, compiled and run by the
 * build so it cannot drift (ReadmeExampleTest runs it against the test node and compares it with
 * the README).
 */
public final class ElectionExample {
    private ElectionExample() {}

    /** Returns the term the loop led with. */
    public static long run(String url) throws IOException, InterruptedException {
        long term;
        // README:start
        try (RestClient rest = RestClient.builder(HttpHost.create(url)).build();
                LockClient locks = LockClientBuilder.forRestClient(rest)
                        .owner("scheduler-1")
                        .build()) {
            Election election = locks.election("report-scheduler");
            AcquireOptions rounds = AcquireOptions.defaults()
                    .withWait(Duration.ofSeconds(10)) // each campaign round queues up to 10 s
                    .withLease(Duration.ofSeconds(30)); // renewed by the watchdog while leading
            CountDownLatch led = new CountDownLatch(1);
            LeaderLoop.Work work = lead -> {
                System.out.println("leading with term " + lead.term()); // fence the leader's writes with it
                led.countDown();
                Thread.sleep(Long.MAX_VALUE); // interrupted when the leadership is lost or the loop closed
            };
            try (LeaderLoop loop =
                    election.leaderLoop("10.0.0.7:8080", rounds, work).start()) {
                led.await(10, TimeUnit.SECONDS);
                ElectionState state = election.state(); // who leads, its value, term and queued candidates
                System.out.println(state.leader().orElse("nobody") + " leads, term " + state.term());
                term = loop.terms().get(0); // the terms this loop led: here state.term()
            } // closed: the work interrupted, the leadership resigned
        }
        // README:end
        return term;
    }
}
