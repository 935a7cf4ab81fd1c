package org.eslm.spring.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two instances of the Spring Boot application against the real node (-Deslm.url), each asked for
 * invoice numbers by two threads at once: every number from 1 to 40 is handed out exactly once
 * and no two callers were ever inside at once. And clients/spring-integration/README.md shows
 * LockRegistryConfig as compiled.
 */
class InvoiceNumbersExampleTest {
    private static final Path MODULE = Path.of(System.getProperty("user.dir"));
    private static final int THREADS_PER_INSTANCE = 2;
    private static final int CALLS_PER_THREAD = 10;

    @Test
    void twoInstancesHandOutEachNumberOnce() throws Exception {
        List<Future<List<Integer>>> callers = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(2 * THREADS_PER_INSTANCE);
        try (ConfigurableApplicationContext first = start();
                ConfigurableApplicationContext second = start()) {
            for (ConfigurableApplicationContext instance : List.of(first, second)) {
                InvoiceNumbers numbers = instance.getBean(InvoiceNumbers.class);
                for (int t = 0; t < THREADS_PER_INSTANCE; t++) {
                    callers.add(pool.submit(() -> {
                        List<Integer> got = new ArrayList<>();
                        for (int i = 0; i < CALLS_PER_THREAD; i++) {
                            got.add(numbers.next());
                        }
                        return got;
                    }));
                }
            }
            Set<Integer> handedOut = new TreeSet<>();
            int calls = 0;
            for (Future<List<Integer>> caller : callers) {
                List<Integer> got = caller.get(120, TimeUnit.SECONDS);
                calls += got.size();
                handedOut.addAll(got);
            }
            int expected = 2 * THREADS_PER_INSTANCE * CALLS_PER_THREAD;
            assertEquals(expected, calls);
            assertEquals(expected, handedOut.size(), "numbers handed out twice: " + handedOut);
            assertEquals(expected, InvoiceNumbers.LAST.get(), "numbers lost");
            assertEquals(1, InvoiceNumbers.MOST_INSIDE.get(), "callers inside at once across the two instances");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theRegistryReadmeShowsTheConfigurationAsCompiled() throws Exception {
        String source =
                Files.readString(MODULE.resolve("src/main/java/org/eslm/spring/example/LockRegistryConfig.java"));
        String start = "// README:start\n";
        int from = source.indexOf(start) + start.length();
        String example = source.substring(from, source.indexOf("// README:end", from));
        String readme = Files.readString(MODULE.resolve("../spring-integration/README.md"));
        assertTrue(
                readme.contains(example), "clients/spring-integration/README.md's configuration differs:\n" + example);
    }

    private static ConfigurableApplicationContext start() {
        String url = System.getProperty("eslm.url", "");
        if (url.isBlank()) {
            fail("-Deslm.url=<node URL> is required: this test runs against a real node with the plugin");
        }
        return new SpringApplicationBuilder(InvoiceApplication.class)
                .web(WebApplicationType.NONE)
                .properties("eslm.url=" + url, "spring.main.banner-mode=off")
                .run();
    }
}
