package org.eslm.spring.boot;

import co.elastic.clients.transport.rest5_client.low_level.Rest5Client;
import org.elasticsearch.client.RestClient;
import org.eslm.client.LockClient;
import org.eslm.client.LockClientBuilder;
import org.eslm.client.LockClientListener;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The two ways to the {@link LockClient} bean, imported in order by {@link
 * LockManagerAutoConfiguration} (this holder is no configuration itself, so Spring keeps that
 * order rather than the order of a configuration's member classes).
 */
final class LockClientConfigurations {
    private LockClientConfigurations() {}

    /** Over the {@code Rest5Client} bean: first, so it is chosen when both clients are beans. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Rest5Client.class)
    @ConditionalOnSingleCandidate(Rest5Client.class)
    static class OverRest5Client {
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        LockClient lockClient(
                Rest5Client rest5Client,
                LockManagerProperties properties,
                ObjectProvider<LockClientListener> listeners,
                ObjectProvider<LockClientBuilderCustomizer> customizers) {
            return build(LockClientBuilder.forRest5Client(rest5Client), properties, listeners, customizers);
        }
    }

    /** Over a legacy {@code RestClient} bean, when there is no {@code Rest5Client} bean. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(RestClient.class)
    @ConditionalOnSingleCandidate(RestClient.class)
    static class OverRestClient {
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        LockClient lockClient(
                RestClient restClient,
                LockManagerProperties properties,
                ObjectProvider<LockClientListener> listeners,
                ObjectProvider<LockClientBuilderCustomizer> customizers) {
            return build(LockClientBuilder.forRestClient(restClient), properties, listeners, customizers);
        }
    }

    static LockClient build(
            LockClientBuilder builder,
            LockManagerProperties properties,
            ObjectProvider<LockClientListener> listeners,
            ObjectProvider<LockClientBuilderCustomizer> customizers) {
        properties.applyTo(builder);
        listeners.orderedStream().forEach(builder::listener);
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }
}
