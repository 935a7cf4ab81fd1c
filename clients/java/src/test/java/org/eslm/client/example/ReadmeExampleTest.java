package org.eslm.client.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.eslm.client.RealNode;
import org.junit.jupiter.api.Test;

/**
 * README.md's Java example is this module's ReadmeExample, and clients/java/README.md's election
 * example its ElectionExample: they run, and the READMEs show them as compiled.
 */
class ReadmeExampleTest {
    private static final Path MODULE = Path.of(System.getProperty("user.dir"));

    @Test
    void theExampleRunsAgainstARealNode() throws IOException {
        long token = ReadmeExample.run(RealNode.url());
        assertTrue(token > 0);
        try (var rest = RealNode.restClient()) {
            assertTrue(RealNode.holders(rest, "orders-42").isEmpty(), "released at the end");
        }
    }

    @Test
    void theReadmeShowsTheExampleAsCompiled() throws IOException {
        String source = Files.readString(MODULE.resolve("src/test/java/org/eslm/client/example/ReadmeExample.java"));
        String example = dedent(between(source, "// README:start\n", "        // README:end"));
        String readme = Files.readString(MODULE.resolve("../../README.md").normalize());
        assertTrue(readme.contains(example), "README.md's Java client example differs from ReadmeExample:\n" + example);
        String clientReadme = Files.readString(MODULE.resolve("README.md"));
        assertTrue(clientReadme.contains(example), "clients/java/README.md's quick start differs:\n" + example);
    }

    @Test
    void theElectionExampleRunsAndTheClientReadmeShowsIt() throws Exception {
        long term = ElectionExample.run(RealNode.url());
        assertTrue(term > 0, "the loop led");
        try (var rest = RealNode.restClient()) {
            var state = RealNode.http(rest, "GET", "/_elections/report-scheduler", null);
            assertTrue(state.body().get("leader").isNull(), "resigned at close: " + state);
        }
        String source = Files.readString(MODULE.resolve("src/test/java/org/eslm/client/example/ElectionExample.java"));
        String example = dedent(between(source, "// README:start\n", "        // README:end"));
        String readme = Files.readString(MODULE.resolve("README.md"));
        assertTrue(readme.contains(example), "clients/java/README.md's election example differs:\n" + example);
    }

    private static String between(String text, String start, String end) {
        int from = text.indexOf(start) + start.length();
        return text.substring(from, text.indexOf(end, from));
    }

    /** The example's lines without the method body's indentation (8 spaces). */
    private static String dedent(String block) {
        List<String> lines = block.lines()
                .map(line -> line.length() >= 8 ? line.substring(8) : line.strip())
                .toList();
        assertEquals(false, lines.isEmpty());
        return String.join("\n", lines) + "\n";
    }
}
