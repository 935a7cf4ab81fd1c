package org.eslm.spring.boot;

import org.eslm.client.LockClientBuilder;

/**
 * Changes the builder of the auto-configured {@link org.eslm.client.LockClient} after the {@code
 * eslm.*} properties were applied, for what no property says: request headers ({@code
 * requestOptions}/{@code rest5RequestOptions}), a callback executor, an {@code onRetry} observer.
 * Every such bean is applied, in {@link org.springframework.core.annotation.Order} order.
 */
@FunctionalInterface
public interface LockClientBuilderCustomizer {
    void customize(LockClientBuilder builder);
}
