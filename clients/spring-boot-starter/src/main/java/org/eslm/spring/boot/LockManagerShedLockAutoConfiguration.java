package org.eslm.spring.boot;

import net.javacrumbs.shedlock.core.LockProvider;
import org.eslm.client.LockClient;
import org.eslm.shedlock.LockManagerLockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * ShedLock's {@link LockProvider} over the {@link LockClient} bean ({@link
 * LockManagerLockProvider}, keys {@code eslm.shedlock.prefix + name}), when ShedLock is on the
 * class path and the application defines no {@code LockProvider} of its own. Then {@code
 * @EnableSchedulerLock} and {@code @SchedulerLock} need nothing more.
 */
@AutoConfiguration(after = LockManagerAutoConfiguration.class)
@ConditionalOnClass({LockProvider.class, LockManagerLockProvider.class})
@ConditionalOnBean(LockClient.class)
@ConditionalOnBooleanProperty(name = "eslm.shedlock.enabled", matchIfMissing = true)
public class LockManagerShedLockAutoConfiguration {
    @Bean
    @ConditionalOnMissingBean(LockProvider.class)
    LockManagerLockProvider lockManagerLockProvider(LockClient lockClient, LockManagerProperties properties) {
        return new LockManagerLockProvider(lockClient, properties.getShedlock().getPrefix());
    }
}
