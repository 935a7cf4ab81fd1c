package org.eslm.client.example;

import java.io.IOException;
import java.time.Duration;
import org.apache.http.HttpHost;
import org.elasticsearch.client.RestClient;
import org.eslm.client.AcquireOptions;
import org.eslm.client.HeldLock;
import org.eslm.client.LockClient;
import org.eslm.client.LockClientBuilder;

/**
 * The example of README.md's "Java client" section, compiled and run by the build so it cannot
 * drift (ReadmeExampleTest runs it against the test node and compares it with README.md). Run
 * it against {@code make run}'s node:
 *
 * <pre>
 * mvn -f clients/pom.xml install -DskipTests
 * mvn -f clients/pom.xml -pl java exec:java -Dexec.args=http://127.0.0.1:9200
 * </pre>
 */
public final class ReadmeExample {
    private ReadmeExample() {}

    public static void main(String[] args) throws IOException {
        run(args.length > 0 ? args[0] : "http://127.0.0.1:9200");
    }

    /** Returns the fencing token it held the lock with. */
    public static long run(String url) throws IOException {
        long token;
        // README:start
        try (RestClient rest = RestClient.builder(HttpHost.create(url)).build();
                LockClient locks = LockClientBuilder.forRestClient(rest).build()) { // one owner per acquisition
            AcquireOptions options = AcquireOptions.defaults()
                    .withLease(Duration.ofSeconds(30)) // renewed by the watchdog while held
                    .withWait(Duration.ofSeconds(5)); // queue up to 5 s, else LockWaitTimeoutException
            try (HeldLock lock = locks.acquire("orders-42", options)) {
                lock.onLost(cause -> System.err.println("lost orders-42: " + cause.getMessage()));
                System.out.println("holding orders-42 with fencing token " + lock.fencingToken());
                token = lock.fencingToken(); // pass it to your writes: docs/API.md, "The fencing recipe"
            } // released here; close() throws LockLostException if the lock was lost meanwhile
        }
        // README:end
        return token;
    }
}
