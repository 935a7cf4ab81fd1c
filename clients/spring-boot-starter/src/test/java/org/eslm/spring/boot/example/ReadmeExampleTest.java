package org.eslm.spring.boot.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.eslm.client.RealNode;
import org.eslm.spring.boot.LockManagerAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.elasticsearch.autoconfigure.ElasticsearchRestClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** README.md's first lock: shown as compiled, and run on the real node (RealNode: -Deslm.url). */
class ReadmeExampleTest {
    private static final Path MODULE = Path.of(System.getProperty("user.dir"));

    @Test
    void theServiceLocksThroughTheStartersClient() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        ElasticsearchRestClientAutoConfiguration.class, LockManagerAutoConfiguration.class))
                .withPropertyValues("spring.elasticsearch.uris=" + RealNode.url())
                .withBean(Shipping.class)
                .run(context -> {
                    Shipping shipping = context.getBean(Shipping.class);
                    String order = UUID.randomUUID().toString();
                    long first = shipping.ship(order);
                    assertThat(first).isPositive();
                    assertThat(shipping.ship(order))
                            .as("a later holder's token")
                            .isGreaterThan(first);
                });
    }

    @Test
    void theReadmeShowsTheServiceAsCompiled() throws IOException {
        String source = Files.readString(MODULE.resolve("src/test/java/org/eslm/spring/boot/example/Shipping.java"));
        String start = "// README:start\n";
        int from = source.indexOf(start) + start.length();
        String example = source.substring(from, source.indexOf("// README:end", from));
        assertThat(Files.readString(MODULE.resolve("README.md"))).contains(example);
    }
}
