package org.eslm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No package of the plugin depends on a package that depends back on it. The layers, each using
 * only those before it: bridge, core, service, cluster, replication, action, health, rest, api, plugin, with
 * settings and compat beneath them all (docs/ARCHITECTURE.md).
 * The graph is read from the production sources: imports and fully-qualified references
 * ({@code org.eslm.<pkg>.}) in code; comments and string literals do not count.
 */
class PackageCyclesTest {
    private static final Pattern REFERENCE = Pattern.compile("org\\.eslm\\.([a-z_][a-z0-9_]*)\\.");
    private static final Pattern COMMENTS_AND_STRINGS = Pattern.compile(
            "/\\*.*?\\*/|//[^\\n]*|\"\"\"(?:.|\\n)*?\"\"\"|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])+'",
            Pattern.DOTALL);

    /** The production source root: from Maven ({@code eslm.main.sources}), else relative to the project. */
    private static Path sourceRoot() {
        String configured = System.getProperty("eslm.main.sources");
        return Path.of(configured != null ? configured : "java/src/main/java");
    }

    @Test
    void theProductionPackagesHaveNoCycle() {
        Map<String, Set<String>> graph = graph(sourceRoot().resolve("org/eslm"));
        assertTrue(
                graph.keySet()
                        .containsAll(List.of(
                                "bridge",
                                "core",
                                "service",
                                "cluster",
                                "replication",
                                "action",
                                "rest",
                                "api",
                                "plugin")),
                graph.toString());
        assertTrue(graph.get("plugin").contains("service"), "the graph sees real dependencies: " + graph);
        List<String> cycle = findCycle(graph);
        assertTrue(cycle.isEmpty(), "package cycle: " + String.join(" -> ", cycle) + " in " + graph);
    }

    @Test
    void theCheckerFindsAndNamesACycle() {
        Map<String, Set<String>> graph = new TreeMap<>();
        graph.put("a", Set.of("b"));
        graph.put("b", Set.of("c"));
        graph.put("c", Set.of("a", "d"));
        graph.put("d", Set.of());
        List<String> cycle = findCycle(graph);
        assertEquals(List.of("a", "b", "c", "a"), cycle);

        graph.put("c", Set.of("d"));
        assertEquals(List.of(), findCycle(graph), "a -> b -> c -> d has no cycle");
        assertEquals(List.of("x", "y", "x"), findCycle(Map.of("x", Set.of("y"), "y", Set.of("x"))));
    }

    @Test
    void referencesInCommentsAndStringsAreNotDependencies() {
        String source = """
            package org.eslm.a;
            import org.eslm.b.Thing; // uses org.eslm.c.Other only in a comment
            /** See {@link org.eslm.d.Doc}. */
            class A { String s = "org.eslm.e.Name"; org.eslm.f.Type t; }
            """;
        assertEquals(Set.of("b", "f"), references(source));
    }

    /** Package (the segment after {@code org.eslm}) to the packages its files refer to. */
    static Map<String, Set<String>> graph(Path root) {
        Map<String, Set<String>> graph = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String pkg = root.relativize(file).getName(0).toString();
                Set<String> uses = graph.computeIfAbsent(pkg, p -> new TreeSet<>());
                for (String used : references(Files.readString(file))) {
                    if (used.equals(pkg) == false) {
                        uses.add(used);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return graph;
    }

    /** The {@code org.eslm} packages a source file refers to in code. */
    static Set<String> references(String source) {
        String code = COMMENTS_AND_STRINGS.matcher(source).replaceAll(" ");
        Set<String> used = new TreeSet<>();
        Matcher m = REFERENCE.matcher(code.replaceFirst("package\\s+[\\w.]+;", ""));
        while (m.find()) {
            used.add(m.group(1));
        }
        return used;
    }

    /** A cycle of {@code graph} as the path around it ({@code a, b, a}), or an empty list. */
    static List<String> findCycle(Map<String, Set<String>> graph) {
        Map<String, Integer> state = new HashMap<>(); // absent: unvisited, 1: on the path, 2: done
        for (String start : new TreeSet<>(graph.keySet())) {
            List<String> path = new ArrayList<>();
            List<String> cycle = visit(graph, start, state, path);
            if (cycle.isEmpty() == false) {
                return cycle;
            }
        }
        return List.of();
    }

    private static List<String> visit(
            Map<String, Set<String>> graph, String node, Map<String, Integer> state, List<String> path) {
        Integer seen = state.get(node);
        if (seen != null && seen == 1) {
            List<String> cycle = new ArrayList<>(path.subList(path.indexOf(node), path.size()));
            cycle.add(node);
            return cycle;
        }
        if (seen != null) {
            return List.of();
        }
        state.put(node, 1);
        path.add(node);
        for (String next : new TreeSet<>(graph.getOrDefault(node, Set.of()))) {
            List<String> cycle = visit(graph, next, state, path);
            if (cycle.isEmpty() == false) {
                return cycle;
            }
        }
        path.remove(path.size() - 1);
        state.put(node, 2);
        return List.of();
    }
}
