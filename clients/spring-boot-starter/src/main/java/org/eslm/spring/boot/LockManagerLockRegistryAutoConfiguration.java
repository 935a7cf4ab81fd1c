package org.eslm.spring.boot;

import java.time.Duration;
import org.eslm.client.AcquireOptions;
import org.eslm.client.LockClient;
import org.eslm.spring.LockManagerLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Spring Integration's {@link LockRegistry} over the {@link LockClient} bean ({@link
 * LockManagerLockRegistry}, keys {@code eslm.lock-registry.prefix + lockKey}, leases of {@code
 * eslm.lock-registry.lease}), when Spring Integration is on the class path and the application
 * defines no {@code LockRegistry} of its own.
 */
@AutoConfiguration(after = LockManagerAutoConfiguration.class)
@ConditionalOnClass({LockRegistry.class, LockManagerLockRegistry.class})
@ConditionalOnBean(LockClient.class)
@ConditionalOnBooleanProperty(name = "eslm.lock-registry.enabled", matchIfMissing = true)
public class LockManagerLockRegistryAutoConfiguration {
    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    LockManagerLockRegistry lockManagerLockRegistry(LockClient lockClient, LockManagerProperties properties) {
        LockManagerProperties.LockRegistry settings = properties.getLockRegistry();
        AcquireOptions options = AcquireOptions.defaults();
        Duration lease = settings.getLease();
        if (lease != null) {
            options = options.withLease(lease);
        }
        return new LockManagerLockRegistry(lockClient, settings.getPrefix(), options);
    }
}
