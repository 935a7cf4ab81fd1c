package org.eslm.shedlock.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two instances of the Spring Boot application against the real node (-Deslm.url): the scheduled
 * job runs, under the lock, and never on both at once, though both schedule it every 50 ms and
 * each run takes 200 ms. And clients/shedlock/README.md shows SchedulerLockConfig as compiled.
 */
class SpringSchedulerExampleTest {
    private static final Path MODULE = Path.of(System.getProperty("user.dir"));

    @Test
    void twoInstancesRunTheScheduledJobOneAtATime() throws Exception {
        try (ConfigurableApplicationContext first = start();
                ConfigurableApplicationContext second = start()) {
            Thread.sleep(3_000);
            assertTrue(first.isActive() && second.isActive());
        }
        assertTrue(ReportJob.RUNS.get() >= 5, "the job ran " + ReportJob.RUNS.get() + " times");
        assertEquals(1, ReportJob.MOST_INSIDE.get(), "runs at once across the two instances");
    }

    @Test
    void theShedLockReadmeShowsTheConfigurationAsCompiled() throws Exception {
        String source =
                Files.readString(MODULE.resolve("src/main/java/org/eslm/shedlock/example/SchedulerLockConfig.java"));
        String start = "// README:start\n";
        int from = source.indexOf(start) + start.length();
        String example = source.substring(from, source.indexOf("// README:end", from));
        String readme = Files.readString(MODULE.resolve("../shedlock/README.md"));
        assertTrue(readme.contains(example), "clients/shedlock/README.md's configuration differs:\n" + example);
    }

    private static ConfigurableApplicationContext start() {
        String url = System.getProperty("eslm.url", "");
        if (url.isBlank()) {
            fail("-Deslm.url=<node URL> is required: this test runs against a real node with the plugin");
        }
        return new SpringApplicationBuilder(ReportApplication.class)
                .web(WebApplicationType.NONE)
                .properties("eslm.url=" + url, "spring.main.banner-mode=off")
                .run();
    }
}
