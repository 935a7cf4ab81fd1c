package org.eslm.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import org.eslm.client.LockClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The client's Micrometer meters, when Micrometer is on the class path and there is a {@link
 * MeterRegistry} bean (Spring Boot's metrics auto-configuration): {@link LockClientMetrics}, a
 * {@link org.eslm.client.LockClientListener} the auto-configured client is built with, and the
 * gauge of {@link LockClientMeterBinder}. A {@code LockClient} of the application's own gets the
 * listener only if its builder is given the {@code LockClientMetrics} bean.
 */
@AutoConfiguration(
        after = LockManagerAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
        })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({MeterRegistry.class, LockClient.class})
@ConditionalOnBooleanProperty(name = "eslm.metrics.enabled", matchIfMissing = true)
public class LockManagerMetricsAutoConfiguration {
    @Bean
    @ConditionalOnMissingBean
    LockClientMetrics lockClientMetrics(MeterRegistry registry) {
        return new LockClientMetrics(registry);
    }

    @Bean
    @ConditionalOnMissingBean
    LockClientMeterBinder lockClientMeterBinder(LockClient lockClient) {
        return new LockClientMeterBinder(lockClient);
    }
}
