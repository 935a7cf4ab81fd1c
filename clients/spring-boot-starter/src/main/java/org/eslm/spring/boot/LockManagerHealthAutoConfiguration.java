package org.eslm.spring.boot;

import org.eslm.client.LockClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The health indicator {@code lockManager} ({@link LockManagerHealthIndicator}) over the {@link
 * LockClient} bean, when Spring Boot's health support ({@code spring-boot-health}, which
 * {@code spring-boot-starter-actuator} brings) is on the class path.
 */
@AutoConfiguration(after = LockManagerAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(LockClient.class)
@ConditionalOnBooleanProperty(name = "eslm.health.enabled", matchIfMissing = true)
public class LockManagerHealthAutoConfiguration {
    @Bean
    @ConditionalOnMissingBean(name = "lockManagerHealthIndicator")
    LockManagerHealthIndicator lockManagerHealthIndicator(LockClient lockClient, LockManagerProperties properties) {
        return new LockManagerHealthIndicator(lockClient, properties.getHealth().getTimeout());
    }
}
