package org.eslm.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import co.elastic.clients.transport.rest5_client.low_level.Rest5Client;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.LockProvider;
import org.apache.http.HttpHost;
import org.elasticsearch.client.RequestOptions;
import org.elasticsearch.client.RestClient;
import org.eslm.client.LockClient;
import org.eslm.client.LockClientBuilder;
import org.eslm.client.PartitionHealth;
import org.eslm.client.RealNode;
import org.eslm.shedlock.LockManagerLockProvider;
import org.eslm.spring.LockManagerLockRegistry;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * When the starter defines what (Spring Boot's context runner): the conditions on the
 * application's Elasticsearch client bean, its own beans, the libraries on the class path and the
 * {@code eslm.*} switches. The clients point at the real node (RealNode: -Deslm.url), though most
 * of these tests send nothing; AgainstTheNodeTest uses the beans.
 */
class AutoConfigurationTest {
    /** These tests run with the others against the node: without its URL they fail, they never skip. */
    @BeforeAll
    static void theNodeIsGiven() {
        RealNode.url();
    }

    /** An application's own client, over Spring Boot's Rest5Client. */
    @Configuration(proxyBeanMethods = false)
    static class OwnLockClient {
        @Bean
        LockClient myLockClient(Rest5Client rest5Client) {
            return LockClientBuilder.forRest5Client(rest5Client).owner("mine").build();
        }
    }

    @Test
    void withoutAnElasticsearchClientBeanNothingIsDefined() {
        Runners.starter().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(LockClient.class);
            assertThat(context).doesNotHaveBean(LockProvider.class);
            assertThat(context).doesNotHaveBean(LockRegistry.class);
            assertThat(context).doesNotHaveBean(HealthIndicator.class);
        });
    }

    @Test
    void springBootsRest5ClientGivesTheClientAndEveryIntegration() {
        Runners.onTheNode().withBean(SimpleMeterRegistry.class).run(context -> {
            assertThat(context).hasSingleBean(Rest5Client.class);
            assertThat(context).hasSingleBean(LockClient.class);
            assertThat(context).hasSingleBean(LockManagerLockProvider.class);
            assertThat(context).hasSingleBean(LockManagerLockRegistry.class);
            assertThat(context).hasSingleBean(LockManagerHealthIndicator.class);
            assertThat(context).hasBean("lockManagerHealthIndicator");
            assertThat(context).hasSingleBean(LockClientMetrics.class);
            assertThat(context).hasSingleBean(LockClientMeterBinder.class);
        });
    }

    @Test
    void aLegacyRestClientBeanServesWhenThereIsNoRest5Client() {
        AtomicReference<String> transport = new AtomicReference<>();
        Runners.starter()
                .withClassLoader(new FilteredClassLoader(Rest5Client.class)) // an application without it
                .withBean(RestClient.class, () -> RestClient.builder(HttpHost.create(RealNode.url()))
                        .build())
                .withBean(LockClientBuilderCustomizer.class, () -> builder -> {
                    builder.requestOptions(RequestOptions.DEFAULT); // throws over a Rest5Client
                    transport.set("RestClient");
                })
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(LockClient.class);
                    assertThat(transport).hasValue("RestClient");
                });
    }

    @Test
    void withBothClientsTheRest5ClientIsChosen() {
        AtomicReference<String> transport = new AtomicReference<>();
        Runners.onTheNode()
                .withBean(RestClient.class, () -> RestClient.builder(HttpHost.create(RealNode.url()))
                        .build())
                .withBean(LockClientBuilderCustomizer.class, () -> builder -> {
                    builder.rest5RequestOptions(
                            co.elastic.clients.transport.rest5_client.low_level.RequestOptions
                                    .DEFAULT); // throws over a RestClient
                    transport.set("Rest5Client");
                })
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(transport).hasValue("Rest5Client");
                });
    }

    @Test
    void eslmEnabledFalseDefinesNothing() {
        Runners.onTheNode().withPropertyValues("eslm.enabled=false").run(context -> {
            assertThat(context).hasSingleBean(Rest5Client.class);
            assertThat(context).doesNotHaveBean(LockClient.class);
            assertThat(context).doesNotHaveBean(LockProvider.class);
            assertThat(context).doesNotHaveBean(LockRegistry.class);
            assertThat(context).doesNotHaveBean(LockManagerHealthIndicator.class);
        });
    }

    @Test
    void theApplicationsOwnBeansReplaceTheStarters() {
        Runners.onTheNode()
                .withUserConfiguration(OwnLockClient.class)
                .withBean("myLockProvider", LockProvider.class, () -> config -> java.util.Optional.empty())
                .withBean("myLockRegistry", LockRegistry.class, DefaultLockRegistry::new)
                .run(context -> {
                    assertThat(context).hasSingleBean(LockClient.class);
                    assertThat(context.getBean(LockClient.class).owner()).isEqualTo("mine");
                    assertThat(context).hasSingleBean(LockProvider.class);
                    assertThat(context).doesNotHaveBean(LockManagerLockProvider.class);
                    assertThat(context).hasSingleBean(LockRegistry.class);
                    assertThat(context).doesNotHaveBean(LockManagerLockRegistry.class);
                    assertThat(context)
                            .hasSingleBean(LockManagerHealthIndicator.class); // over the application's client
                });
    }

    @Test
    void eachIntegrationHasItsSwitch() {
        Runners.onTheNode()
                .withBean(SimpleMeterRegistry.class)
                .withPropertyValues(
                        "eslm.shedlock.enabled=false",
                        "eslm.lock-registry.enabled=false",
                        "eslm.health.enabled=false",
                        "eslm.metrics.enabled=false")
                .run(context -> {
                    assertThat(context).hasSingleBean(LockClient.class);
                    assertThat(context).doesNotHaveBean(LockProvider.class);
                    assertThat(context).doesNotHaveBean(LockRegistry.class);
                    assertThat(context).doesNotHaveBean(LockManagerHealthIndicator.class);
                    assertThat(context).doesNotHaveBean(LockClientMetrics.class);
                });
    }

    @Test
    void eachIntegrationNeedsItsLibrary() {
        Runners.onTheNode()
                .withBean(SimpleMeterRegistry.class)
                .withClassLoader(new FilteredClassLoader(
                        LockProvider.class, LockRegistry.class, HealthIndicator.class, MeterRegistry.class))
                .run(context -> {
                    assertThat(context).hasSingleBean(LockClient.class);
                    assertThat(context).doesNotHaveBean(LockManagerLockProvider.class);
                    assertThat(context).doesNotHaveBean(LockManagerLockRegistry.class);
                    assertThat(context).doesNotHaveBean(LockManagerHealthIndicator.class);
                    assertThat(context).doesNotHaveBean(LockClientMetrics.class);
                });
        // Without a MeterRegistry bean (no metrics auto-configuration), no meters either.
        Runners.onTheNode().run(context -> assertThat(context).doesNotHaveBean(LockClientMetrics.class));
    }

    @Test
    void thePropertiesReachTheClientAndTheIntegrations() {
        Runners.onTheNode()
                .withPropertyValues(
                        "eslm.owner=app-1",
                        "eslm.retry-budget=2s",
                        "eslm.renew-fraction=0.5",
                        "eslm.loss-watches=2",
                        "eslm.shedlock.prefix=jobs-",
                        "eslm.lock-registry.prefix=registry-",
                        "eslm.lock-registry.lease=20s",
                        "eslm.health.timeout=3s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LockManagerProperties properties = context.getBean(LockManagerProperties.class);
                    assertThat(properties.getRetryBudget()).hasSeconds(2);
                    assertThat(properties.getRenewFraction()).isEqualTo(0.5);
                    assertThat(properties.getLossWatches()).isEqualTo(2);
                    assertThat(properties.getLockRegistry().getLease()).hasSeconds(20);
                    assertThat(properties.getHealth().getTimeout()).hasSeconds(3);
                    assertThat(context.getBean(LockClient.class).owner()).isEqualTo("app-1");
                    assertThat(context.getBean(LockManagerLockProvider.class).keyOf("report"))
                            .isEqualTo("jobs-report");
                    assertThat(context.getBean(LockManagerLockRegistry.class).keyOf("invoice"))
                            .isEqualTo("registry-invoice");
                });
        Runners.onTheNode().run(context -> assertThat(
                        context.getBean(LockManagerLockProvider.class).keyOf("report"))
                .isEqualTo("shedlock-report"));
        Runners.onTheNode().withPropertyValues("eslm.renew-fraction=1.5").run(context -> assertThat(context)
                .getFailure()
                .rootCause()
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("renew_fraction"));
    }

    @Test
    void theClientIsClosedWithTheContext() {
        AtomicReference<LockClient> client = new AtomicReference<>();
        Runners.onTheNode().run(context -> {
            client.set(context.getBean(LockClient.class));
            assertThat(client.get().isClosed()).isFalse();
        });
        assertThat(client.get().isClosed()).isTrue();
    }

    @Test
    void theClustersStatusMapsToUpOrDown() {
        Map<String, Object> details = Map.of("partitions", 1, "without_replica", 1);
        Health yellow = LockManagerHealthIndicator.of(
                        new PartitionHealth("yellow", "1 lock partition has no replica.", details))
                .build();
        assertThat(yellow.getStatus()).isEqualTo(Status.UP);
        assertThat(yellow.getDetails())
                .containsEntry("lock_partitions", "yellow")
                .containsEntry("symptom", "1 lock partition has no replica.")
                .containsEntry("partitions", details);
        assertThat(LockManagerHealthIndicator.of(new PartitionHealth("green", "", Map.of()))
                        .build()
                        .getStatus())
                .isEqualTo(Status.UP);
        for (String down : List.of("red", "unknown")) {
            assertThat(LockManagerHealthIndicator.of(new PartitionHealth(down, "", Map.of()))
                            .build()
                            .getStatus())
                    .as(down)
                    .isEqualTo(Status.DOWN);
        }
    }

    @Test
    void theAutoConfigurationsAreRegisteredAndThePropertiesDescribed() throws IOException {
        List<String> registered =
                ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates().stream()
                        .filter(name -> name.startsWith("org.eslm."))
                        .toList();
        assertThat(registered)
                .containsExactly(
                        LockManagerAutoConfiguration.class.getName(),
                        LockManagerShedLockAutoConfiguration.class.getName(),
                        LockManagerLockRegistryAutoConfiguration.class.getName(),
                        LockManagerHealthAutoConfiguration.class.getName(),
                        LockManagerMetricsAutoConfiguration.class.getName());

        JsonNode metadata;
        try (InputStream in =
                getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("the configuration processor's metadata").isNotNull();
            metadata = new ObjectMapper().readTree(in);
        }
        Map<String, String> described = new HashMap<>();
        metadata.path("properties")
                .forEach(p -> described.put(
                        p.path("name").asText(), p.path("description").asText("")));
        assertThat(described)
                .containsOnlyKeys(
                        "eslm.enabled",
                        "eslm.owner",
                        "eslm.retry-budget",
                        "eslm.renew-fraction",
                        "eslm.loss-watches",
                        "eslm.shedlock.enabled",
                        "eslm.shedlock.prefix",
                        "eslm.lock-registry.enabled",
                        "eslm.lock-registry.prefix",
                        "eslm.lock-registry.lease",
                        "eslm.health.enabled",
                        "eslm.health.timeout",
                        "eslm.metrics.enabled");
        assertThat(described.values()).allSatisfy(text -> assertThat(text).isNotBlank());
    }
}
