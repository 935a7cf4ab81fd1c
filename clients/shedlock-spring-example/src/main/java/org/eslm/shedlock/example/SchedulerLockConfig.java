package org.eslm.shedlock.example;

import co.elastic.clients.transport.rest5_client.low_level.Rest5Client;
import java.net.URI;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.eslm.client.LockClient;
import org.eslm.client.LockClientBuilder;
import org.eslm.shedlock.LockManagerLockProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The ShedLock configuration clients/shedlock/README.md shows (between the README markers, checked
 * by SpringSchedulerExampleTest): the provider is a bean over the application's Rest5Client.
 */
// README:start
@Configuration
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
public class SchedulerLockConfig {
    @Bean(destroyMethod = "close")
    Rest5Client rest5Client(@Value("${eslm.url}") String url) { // or the one your application has
        return Rest5Client.builder(URI.create(url)).build();
    }

    @Bean(destroyMethod = "close")
    LockClient lockClient(Rest5Client rest5Client) {
        return LockClientBuilder.forRest5Client(rest5Client).build();
    }

    @Bean
    LockProvider lockProvider(LockClient lockClient) {
        return new LockManagerLockProvider(lockClient);
    }
}
// README:end
