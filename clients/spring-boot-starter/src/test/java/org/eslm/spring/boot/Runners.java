package org.eslm.spring.boot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import org.eslm.client.RealNode;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.elasticsearch.autoconfigure.ElasticsearchRestClientAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Context runners of an application with the starter, as Spring Boot would start it. */
final class Runners {
    /** The starter's auto-configurations, as META-INF/spring/...AutoConfiguration.imports lists them. */
    static final AutoConfigurations STARTER = AutoConfigurations.of(
            LockManagerAutoConfiguration.class,
            LockManagerShedLockAutoConfiguration.class,
            LockManagerLockRegistryAutoConfiguration.class,
            LockManagerHealthAutoConfiguration.class,
            LockManagerMetricsAutoConfiguration.class);

    /** Spring Boot's own Elasticsearch auto-configuration: the Rest5Client of spring.elasticsearch.uris. */
    static final AutoConfigurations ELASTICSEARCH =
            AutoConfigurations.of(ElasticsearchRestClientAutoConfiguration.class);

    /** Spring Boot's metrics auto-configuration: a SimpleMeterRegistry, MeterBinder beans bound. */
    static final AutoConfigurations METRICS = AutoConfigurations.of(
            MetricsAutoConfiguration.class,
            CompositeMeterRegistryAutoConfiguration.class,
            SimpleMetricsExportAutoConfiguration.class);

    private Runners() {}

    /** The starter only: no Elasticsearch client bean unless the test adds one. */
    static ApplicationContextRunner starter() {
        return new ApplicationContextRunner().withConfiguration(STARTER);
    }

    /** The starter over Spring Boot's Rest5Client of the real node (RealNode: -Deslm.url). */
    static ApplicationContextRunner onTheNode() {
        return onUrl(RealNode.url());
    }

    /** The starter over Spring Boot's Rest5Client of {@code url}. */
    static ApplicationContextRunner onUrl(String url) {
        return starter().withConfiguration(ELASTICSEARCH).withPropertyValues("spring.elasticsearch.uris=" + url);
    }

    /** A loopback URL where nothing listens (a port just given back by the system). */
    static String unreachableUrl() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return "http://127.0.0.1:" + socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
