package org.eslm.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The bridge's numbers are defined once, in Rust ({@code ops::Op}, {@code lock_core::ErrorCode}),
 * and emitted by cbindgen into the committed C header {@code rust/lock-jni/include/eslm.h}, which a
 * Rust test keeps current. This test holds the Java copies ({@link NativeOp},
 * {@link NativeLockException}'s constants, {@link NativeLogLevel}, {@link NativeFormat},
 * {@link NativeLockCore#ALL_PARTITIONS}, {@link NativeBounds}) to that header, name by name and number by number.
 */
class BridgeVocabularyTest {
    private static final Pattern OP = Pattern.compile("^\\s*ESLM_OP_(\\w+) = (\\d+),", Pattern.MULTILINE);
    private static final Pattern STATUS = Pattern.compile("^\\s*LM_STATUS_(\\w+) = (\\d+),", Pattern.MULTILINE);
    /** The success status is not an outcome: no exception carries it. */
    private static final String SUCCESS = "OK";

    @Test
    void everyOpHasTheHeadersNumber() throws IOException {
        Map<String, Integer> java = new TreeMap<>();
        for (NativeOp op : NativeOp.values()) {
            java.put(op.name(), op.code());
        }
        assertEquals(List.of(), mismatches(constants(OP, header()), java));
    }

    @Test
    void everyStatusHasTheHeadersNumber() throws IOException, IllegalAccessException {
        Map<String, Integer> header = constants(STATUS, header());
        header.remove(SUCCESS);
        Map<String, Integer> java = new TreeMap<>();
        for (Field f : NativeLockException.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                java.put(f.getName(), f.getInt(null));
            }
        }
        assertEquals(List.of(), mismatches(header, java));
    }

    private static final Pattern FORMAT =
            Pattern.compile("^#define ESLM_(\\w*STATE_FORMAT) (\\d+)$", Pattern.MULTILINE);

    /** The state formats (docs/ARCHITECTURE.md "Formats and versions") are the core's. */
    @Test
    void theStateFormatsAreTheHeaders() throws IOException {
        Map<String, Integer> java = Map.of(
                "STATE_FORMAT",
                NativeFormat.STATE_FORMAT,
                "OLDEST_STATE_FORMAT",
                NativeFormat.OLDEST_STATE_FORMAT,
                "ACQUISITION_STATE_FORMAT",
                NativeFormat.ACQUISITION_STATE_FORMAT,
                "GROUPS_STATE_FORMAT",
                NativeFormat.GROUPS_STATE_FORMAT);
        Map<String, Integer> header = constants(FORMAT, header());
        assertEquals(4, header.size(), "every format in the header: " + header);
        assertEquals(List.of(), mismatches(header, java));
    }

    private static final Pattern LIMIT =
            Pattern.compile("^#define ESLM_((?:MAX|LIST)_\\w+) (\\d+)$", Pattern.MULTILINE);

    /** Every limit the plugin checks as it parses a body is the core's, and the header has no other. */
    @Test
    void theLimitsAreTheHeaders() throws IOException, IllegalAccessException {
        Map<String, Integer> java = new TreeMap<>();
        for (Field f : NativeLimits.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                java.put(f.getName(), f.getInt(null));
            }
        }
        Map<String, Integer> header = constants(LIMIT, header());
        assertEquals(7, header.size(), "every limit in the header: " + header);
        assertEquals(header, java);
    }

    private static final Pattern BOUND = Pattern.compile("^#define ESLM_BOUND_(\\w+) (\\d+)$", Pattern.MULTILINE);

    /** Every bound of the ownership protocol is the core's, and the header has no other. */
    @Test
    void theBoundsAreTheHeaders() throws IOException, IllegalAccessException {
        Map<String, Integer> java = new TreeMap<>();
        for (Field f : NativeBounds.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == long.class) {
                java.put(f.getName(), Math.toIntExact(f.getLong(null)));
            }
        }
        Map<String, Integer> header = constants(BOUND, header());
        assertEquals(15, header.size(), "every bound in the header: " + header);
        assertEquals(header, java);
    }

    private static final Pattern LOG_LEVEL = Pattern.compile("^\\s*ESLM_LOG_LEVEL_(\\w+) = (\\d+),", Pattern.MULTILINE);

    @Test
    void everyLogLevelHasTheHeadersNumber() throws IOException {
        Map<String, Integer> java = new TreeMap<>();
        for (NativeLogLevel level : NativeLogLevel.values()) {
            java.put(level.name(), level.code());
        }
        Map<String, Integer> header = constants(LOG_LEVEL, header());
        assertEquals(5, header.size(), "every level in the header: " + header);
        assertEquals(List.of(), mismatches(header, java));
    }

    private static final Pattern ALL_PARTITIONS =
            Pattern.compile("^#define (ALL_PARTITIONS) (-?\\d+)$", Pattern.MULTILINE);

    /** The partition number of node-wide ops. */
    @Test
    void allPartitionsIsTheHeaders() throws IOException {
        Map<String, Integer> header = constants(ALL_PARTITIONS, header());
        assertEquals(List.of(), mismatches(header, Map.of("ALL_PARTITIONS", NativeLockCore.ALL_PARTITIONS)));
    }

    private static final Pattern FIELD = Pattern.compile("^\\s*ESLM_FIELD_(\\w+),", Pattern.MULTILINE);

    /** The members the plugin reads are the header's, in its order (a renamed one fails here or in Rust). */
    @Test
    void everyFieldIsTheHeaders() throws IOException {
        List<String> header = new ArrayList<>();
        Matcher m = FIELD.matcher(header());
        while (m.find()) {
            header.add(m.group(1));
        }
        List<String> java = new ArrayList<>();
        for (BridgeField field : BridgeField.values()) {
            java.add(field.name());
        }
        assertEquals(header, java);
        assertEquals("tick_in_ms", BridgeField.TICK_IN_MS.key());
    }

    private static final Pattern REQUEST = Pattern.compile("^\\s*ESLM_REQUEST_(\\w+),", Pattern.MULTILINE);

    /** The requests whose bodies the core reads are the header's, in its order. */
    @Test
    void everyRequestIsTheHeaders() throws IOException {
        List<String> header = new ArrayList<>();
        Matcher m = REQUEST.matcher(header());
        while (m.find()) {
            header.add(m.group(1));
        }
        List<String> java = new ArrayList<>();
        for (NativeRequest request : NativeRequest.values()) {
            java.add(request.name());
        }
        assertEquals(header, java);
        assertEquals("lock_acquire_request", NativeRequest.LOCK_ACQUIRE.bodyName());
    }

    /** The checker itself finds a renumbered, a missing and an extra constant. */
    @Test
    void aDeliberateMismatchIsReported() {
        Map<String, Integer> header = Map.of("ACQUIRE", 1, "RELEASE", 2, "RENEW", 3);
        Map<String, Integer> java = Map.of("ACQUIRE", 1, "RELEASE", 3, "TICK", 15);
        assertEquals(
                List.of("RELEASE: header 2, Java 3", "RENEW: header 3, Java none", "TICK: header none, Java 15"),
                mismatches(header, java));
    }

    @Test
    void theHeaderIsParsed() throws IOException {
        // Guards the regular expressions: an empty parse would make the comparisons vacuous.
        assertEquals(1, constants(OP, header()).get("ACQUIRE"));
        assertEquals(99, constants(STATUS, header()).get("INTERNAL"));
    }

    static List<String> mismatches(Map<String, Integer> header, Map<String, Integer> java) {
        List<String> out = new ArrayList<>();
        TreeSet<String> names = new TreeSet<>(header.keySet());
        names.addAll(java.keySet());
        for (String name : names) {
            Integer h = header.get(name);
            Integer j = java.get(name);
            if (h == null || h.equals(j) == false) {
                out.add(name + ": header " + (h == null ? "none" : h) + ", Java " + (j == null ? "none" : j));
            }
        }
        return out;
    }

    private static Map<String, Integer> constants(Pattern pattern, String text) {
        Map<String, Integer> out = new TreeMap<>();
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            out.put(m.group(1), Integer.parseInt(m.group(2)));
        }
        return out;
    }

    private static String header() throws IOException {
        return Files.readString(Path.of(System.getProperty("eslm.c.header", "rust/lock-jni/include/eslm.h")));
    }
}
