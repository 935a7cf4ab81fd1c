package org.eslm.spring.example;

import co.elastic.clients.transport.rest5_client.low_level.Rest5Client;
import java.net.URI;
import org.eslm.client.LockClient;
import org.eslm.client.LockClientBuilder;
import org.eslm.spring.LockManagerLockRegistry;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The configuration clients/spring-integration/README.md shows (between the README markers,
 * checked by InvoiceNumbersExampleTest): the registry is a bean over the application's Rest5Client.
 */
// README:start
@Configuration
public class LockRegistryConfig {
    @Bean(destroyMethod = "close")
    Rest5Client rest5Client(@Value("${eslm.url}") String url) { // or the one your application has
        return Rest5Client.builder(URI.create(url)).build();
    }

    @Bean(destroyMethod = "close")
    LockClient lockClient(Rest5Client rest5Client) {
        return LockClientBuilder.forRest5Client(rest5Client).build();
    }

    @Bean
    LockManagerLockRegistry lockRegistry(LockClient lockClient) {
        return new LockManagerLockRegistry(lockClient, "invoices-"); // keys: "invoices-" + lockKey
    }
}
// README:end
