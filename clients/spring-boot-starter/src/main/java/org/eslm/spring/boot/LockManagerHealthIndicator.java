package org.eslm.spring.boot;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eslm.client.LockClient;
import org.eslm.client.PartitionHealth;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * The lock manager as Actuator sees it: the cluster's {@code lock_partitions} health indicator
 * ({@code GET _health_report/lock_partitions}, docs/API.md "Health") and the client's own state.
 *
 * <table>
 *   <caption>status</caption>
 *   <tr><th>when</th><th>status</th></tr>
 *   <tr><td>{@code green}</td><td>UP</td></tr>
 *   <tr><td>{@code yellow}: requests are served, but a partition is at risk or paused
 *       ({@code without_replica}, {@code unconfirmed}, {@code in_grace})</td><td>UP, with the
 *       indicator's symptom and findings in the details</td></tr>
 *   <tr><td>{@code red} or {@code unknown}</td><td>DOWN</td></tr>
 *   <tr><td>no answer within {@code eslm.health.timeout}, or an error</td><td>DOWN, with the error</td></tr>
 *   <tr><td>the client was closed</td><td>DOWN</td></tr>
 * </table>
 *
 * <p>Details: {@code lock_partitions} (the indicator's status), {@code symptom}, {@code partitions}
 * (the indicator's details), and {@code client}: {@code open}, {@code held_locks}, {@code
 * lost_locks}, {@code owner}.
 */
public class LockManagerHealthIndicator implements HealthIndicator {
    private final LockClient client;
    private final Duration timeout;

    public LockManagerHealthIndicator(LockClient client, Duration timeout) {
        this.client = client;
        this.timeout = timeout;
    }

    @Override
    public Health health() {
        Map<String, Object> clientState = clientState();
        if (client.isClosed()) {
            return Health.down().withDetail("client", clientState).build();
        }
        CompletableFuture<PartitionHealth> asking = client.partitionHealthAsync();
        try {
            PartitionHealth partitions = asking.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return of(partitions).withDetail("client", clientState).build();
        } catch (TimeoutException e) {
            asking.cancel(true);
            return Health.down()
                    .withDetail("error", "no answer to GET _health_report/lock_partitions within " + timeout)
                    .withDetail("client", clientState)
                    .build();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            return Health.down(cause).withDetail("client", clientState).build();
        } catch (InterruptedException e) {
            asking.cancel(true);
            Thread.currentThread().interrupt();
            return Health.down(e).withDetail("client", clientState).build();
        }
    }

    /** The status and details of the cluster's indicator. */
    static Health.Builder of(PartitionHealth partitions) {
        Status status =
                switch (partitions.status()) {
                    case "green", "yellow" -> Status.UP;
                    default -> Status.DOWN; // red, unknown
                };
        return Health.status(status)
                .withDetail("lock_partitions", partitions.status())
                .withDetail("symptom", partitions.symptom())
                .withDetail("partitions", partitions.details());
    }

    private Map<String, Object> clientState() {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("open", !client.isClosed());
        state.put("held_locks", client.heldLocks());
        state.put("lost_locks", client.lostLocks());
        state.put("owner", client.owner());
        return state;
    }
}
