package org.eslm.spring.boot;

import org.eslm.client.LockClient;
import org.eslm.client.LockClientListener;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/**
 * The {@link LockClient} bean, built over the application's Elasticsearch low-level client bean:
 * the {@code Rest5Client} Spring Boot 4 configures from {@code spring.elasticsearch.*} (or one of
 * the application's own), else a legacy {@code RestClient} bean ({@link LockClientConfigurations}:
 * imported in that order, so the {@code Rest5Client} is chosen when both are beans). The {@code
 * eslm.*} properties, every {@link LockClientListener} bean and every {@link
 * LockClientBuilderCustomizer} bean are applied to its builder. Closed with the context (the REST
 * client stays the application's). An application's own {@code LockClient} bean replaces it.
 */
@AutoConfiguration(
        afterName = "org.springframework.boot.elasticsearch.autoconfigure.ElasticsearchRestClientAutoConfiguration")
@ConditionalOnClass(LockClient.class)
@ConditionalOnBooleanProperty(name = "eslm.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LockManagerProperties.class)
@Import({LockClientConfigurations.OverRest5Client.class, LockClientConfigurations.OverRestClient.class})
public class LockManagerAutoConfiguration {}
