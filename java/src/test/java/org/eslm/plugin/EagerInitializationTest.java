package org.eslm.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.elasticsearch.common.logging.LogConfigurator;
import org.junit.jupiter.api.Test;

/**
 * The plugin's constructor initializes {@code ElasticsearchException} (see {@link
 * LockManagerPlugin#LockManagerPlugin()}: done later, on a request thread, it can deadlock with a
 * write thread). Checked in a JVM of its own, where nothing else has initialized it, by the JVM's
 * class-initialization log: the class is initialized before the constructor returns.
 */
class EagerInitializationTest {
    private static final String CONFIGURED = "eslm: logging is configured";
    private static final String CONSTRUCTED = "eslm: the plugin is constructed";

    /**
     * Configures Elasticsearch's logging, as a node does before it loads its plugins (the
     * exceptions' registry needs it), then constructs the plugin, saying when each is done; run by
     * the test in a fresh JVM.
     */
    public static final class Probe {
        public static void main(String[] args) {
            LogConfigurator.configureESLogging();
            System.out.println(CONFIGURED);
            new LockManagerPlugin();
            System.out.println(CONSTRUCTED);
        }
    }

    @Test
    void elasticsearchExceptionIsInitializedBeforeTheConstructorReturns() throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process process = new ProcessBuilder(
                        java,
                        "-Xlog:class+init=info",
                        "-cp",
                        System.getProperty("java.class.path"),
                        Probe.class.getName())
                .redirectErrorStream(true)
                .start();
        List<String> lines = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                .lines()
                .toList();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the probe did not end");
        assertEquals(
                0,
                process.exitValue(),
                () -> String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())));
        int initialized = indexOf(lines, "Initializing 'org/elasticsearch/ElasticsearchException'");
        int configured = indexOf(lines, CONFIGURED);
        int constructed = indexOf(lines, CONSTRUCTED);
        assertTrue(configured >= 0 && constructed > configured, "the probe never constructed the plugin");
        assertTrue(
                initialized > configured && initialized < constructed,
                "ElasticsearchException was not initialized by the plugin's constructor (line " + initialized
                        + ", constructed at line " + constructed + ")");
    }

    /** What the probe printed but the class-initialization log. */
    private static List<String> output(List<String> lines) {
        return lines.stream().filter(line -> !line.contains("][class,init]")).toList();
    }

    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }
}
