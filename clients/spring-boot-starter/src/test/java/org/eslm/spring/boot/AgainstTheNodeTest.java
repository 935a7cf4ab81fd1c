package org.eslm.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.elasticsearch.client.RestClient;
import org.eslm.client.AcquireOptions;
import org.eslm.client.HeldLock;
import org.eslm.client.LockClient;
import org.eslm.client.RealNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.health.registry.HealthContributorRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The starter's beans at work on the real node (RealNode: -Deslm.url), in applications started by
 * Spring Boot's context runner over Spring Boot's own Rest5Client of {@code spring.elasticsearch.uris}:
 * a lock through the auto-configured client, ShedLock's provider and Spring Integration's
 * registry excluding a second application, the health indicator UP on the node and DOWN where
 * nothing answers, and the Micrometer meters counting grants, waits, renewals and a loss. What
 * the node sees is checked apart, over a legacy RestClient of the test's own.
 */
class AgainstTheNodeTest {
    private static RestClient rest;

    @BeforeAll
    static void connect() {
        rest = RealNode.restClient();
    }

    @AfterAll
    static void disconnect() throws Exception {
        rest.close();
    }

    @Test
    void aLockThroughTheAutoConfiguredClient() {
        String key = RealNode.uniqueKey("boot-lock");
        Runners.onTheNode().run(context -> {
            LockClient locks = context.getBean(LockClient.class);
            try (HeldLock held = locks.acquire(key, AcquireOptions.defaults().withLease(Duration.ofSeconds(30)))) {
                assertThat(RealNode.holders(rest, key)).hasSize(1);
                assertThat(RealNode.holders(rest, key).get(0).path("owner").asText())
                        .isEqualTo(held.owner());
                assertThat(held.fencingToken()).isPositive();
                assertThat(locks.heldLocks()).isEqualTo(1);
            }
            assertThat(RealNode.holders(rest, key)).isEmpty();
        });
    }

    @Test
    void shedLocksProviderRunsAJobInOneApplicationAtATime() {
        String name = "boot-job-" + UUID.randomUUID();
        Runners.onTheNode().run(one -> Runners.onTheNode().run(two -> {
            LockProvider first = one.getBean(LockProvider.class);
            LockProvider second = two.getBean(LockProvider.class);
            Optional<SimpleLock> taken = first.lock(job(name));
            assertThat(taken).isPresent();
            assertThat(RealNode.holders(rest, "shedlock-" + name)).hasSize(1);
            assertThat(second.lock(job(name))).isEmpty();
            taken.get().unlock();
            assertThat(RealNode.holders(rest, "shedlock-" + name)).isEmpty();
            Optional<SimpleLock> then = second.lock(job(name));
            assertThat(then).isPresent();
            then.get().unlock();
        }));
    }

    private static LockConfiguration job(String name) {
        return new LockConfiguration(Instant.now(), name, Duration.ofSeconds(30), Duration.ZERO);
    }

    @Test
    void theLockRegistryExcludesAnotherApplication() {
        String key = "invoice-" + UUID.randomUUID();
        Runners.onTheNode()
                .withPropertyValues("eslm.lock-registry.prefix=boot-registry-")
                .run(one -> Runners.onTheNode()
                        .withPropertyValues("eslm.lock-registry.prefix=boot-registry-")
                        .run(two -> {
                            Lock mine = one.getBean(LockRegistry.class).obtain(key);
                            Lock theirs = two.getBean(LockRegistry.class).obtain(key);
                            mine.lock();
                            try {
                                assertThat(RealNode.holders(rest, "boot-registry-" + key))
                                        .hasSize(1);
                                assertThat(inAnotherThread(theirs, Duration.ofMillis(300))
                                                .get(30, TimeUnit.SECONDS))
                                        .isFalse();
                            } finally {
                                mine.unlock();
                            }
                            assertThat(inAnotherThread(theirs, Duration.ofSeconds(10))
                                            .get(30, TimeUnit.SECONDS))
                                    .isTrue();
                        }));
    }

    private static CompletableFuture<Boolean> inAnotherThread(Lock lock, Duration wait) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                boolean got = lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS);
                if (got) {
                    lock.unlock();
                }
                return got;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
    }

    @Test
    void healthIsUpOnTheNodeWithTheClientsState() {
        String key = RealNode.uniqueKey("boot-health");
        Runners.onTheNode()
                .withConfiguration(AutoConfigurations.of(HealthContributorRegistryAutoConfiguration.class))
                .run(context -> {
                    LockManagerHealthIndicator indicator = context.getBean(LockManagerHealthIndicator.class);
                    assertThat(context.getBean(HealthContributorRegistry.class).getContributor("lockManager"))
                            .as("Actuator's name of it: /actuator/health/lockManager")
                            .isSameAs(indicator);
                    RealNode.await(
                            () -> indicator.health().getStatus().equals(Status.UP),
                            Duration.ofSeconds(30),
                            "UP on the node");
                    try (HeldLock held = context.getBean(LockClient.class).acquire(key)) {
                        assertThat(held.isLost()).isFalse();
                        Health health = indicator.health();
                        assertThat(health.getStatus()).isEqualTo(Status.UP);
                        assertThat(health.getDetails())
                                .containsEntry("lock_partitions", "green")
                                .containsKeys("symptom", "partitions");
                        assertThat(client(health))
                                .containsEntry("open", true)
                                .containsEntry("held_locks", 1)
                                .containsEntry("lost_locks", 0L);
                    }
                    context.getBean(LockClient.class).close();
                    Health closed = indicator.health();
                    assertThat(closed.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(client(closed)).containsEntry("open", false);
                });
    }

    @Test
    void healthIsDownWhereNothingAnswers() {
        Runners.onUrl(Runners.unreachableUrl())
                .withPropertyValues("eslm.health.timeout=5s")
                .run(context -> {
                    long started = System.nanoTime();
                    Health health =
                            context.getBean(LockManagerHealthIndicator.class).health();
                    Duration took = Duration.ofNanos(System.nanoTime() - started);
                    assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(String.valueOf(health.getDetails().get("error"))).contains("LockTransportException");
                    assertThat(client(health)).containsEntry("open", true);
                    assertThat(took).isLessThan(Duration.ofSeconds(10));
                });
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> client(Health health) {
        return (Map<String, Object>) health.getDetails().get("client");
    }

    @Test
    void theMetersCountGrantsWaitsRenewalsAndALoss() {
        String key = RealNode.uniqueKey("boot-meters");
        Runners.onTheNode().withConfiguration(Runners.METRICS).run(context -> {
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            LockClient locks = context.getBean(LockClient.class);

            HeldLock held = locks.acquire(key, AcquireOptions.defaults().withLease(Duration.ofSeconds(1)));
            assertThat(registry.get(LockClientMeterBinder.HELD).gauge().value()).isEqualTo(1.0);
            assertThat(locks.tryAcquire(key)).isEmpty();
            RealNode.await(
                    () -> count(registry, LockClientMetrics.RENEWALS, "outcome", "success") >= 1,
                    Duration.ofSeconds(10),
                    "a renewal counted");
            CompletableFuture<HeldLock> queued =
                    locks.acquireAsync(key, AcquireOptions.defaults().withWait(Duration.ofSeconds(10)));
            Thread.sleep(300);
            held.close();
            HeldLock next = queued.get(30, TimeUnit.SECONDS);
            assertThat(RealNode.forceRelease(rest, key).status()).isEqualTo(200);
            RealNode.await(() -> next.isLost(), Duration.ofSeconds(10), "the force-released lock lost");

            assertThat(timer(registry, LockClientMetrics.ACQUIRE, "outcome", "acquired")
                            .count())
                    .isEqualTo(2);
            assertThat(timer(registry, LockClientMetrics.ACQUIRE, "outcome", "busy")
                            .count())
                    .isEqualTo(1);
            Timer waited = timer(registry, LockClientMetrics.WAIT, "scope", "key");
            assertThat(waited.count()).isEqualTo(1);
            assertThat(waited.totalTime(TimeUnit.MILLISECONDS)).isGreaterThan(0);
            assertThat(timer(registry, LockClientMetrics.HOLD, "scope", "key").count())
                    .isEqualTo(1);
            RealNode.await(
                    () -> count(registry, LockClientMetrics.LOST, "cause", "lock_not_held_exception") == 1,
                    Duration.ofSeconds(10),
                    "the loss counted");
            assertThat(registry.get(LockClientMeterBinder.HELD).gauge().value()).isEqualTo(1.0); // lost, not yet closed
            try {
                next.close();
            } catch (RuntimeException lost) {
                // LockLostException, as the lock was lost
            }
            assertThat(registry.get(LockClientMeterBinder.HELD).gauge().value()).isEqualTo(0.0);
            for (Meter meter : registry.getMeters()) {
                for (Tag tag : meter.getId().getTags()) {
                    assertThat(tag.getValue()).as(meter.getId().toString()).doesNotContain(key);
                }
            }
        });
    }

    private static Timer timer(MeterRegistry registry, String name, String tag, String value) {
        return registry.get(name).tag(tag, value).timer();
    }

    private static double count(MeterRegistry registry, String name, String tag, String value) {
        Counter counter = registry.find(name).tag(tag, value).counter();
        return counter == null ? 0 : counter.count();
    }
}
