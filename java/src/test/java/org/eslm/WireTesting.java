package org.eslm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.cluster.node.VersionInformation;
import org.elasticsearch.common.bytes.BytesReference;
import org.elasticsearch.common.io.stream.BytesStreamOutput;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.Writeable;
import org.elasticsearch.common.transport.TransportAddress;

/**
 * Wire round trips in the spirit of Elasticsearch's {@code AbstractWireSerializingTestCase}:
 * seeded random instances are written, read back, and must be equal with the same hash code,
 * with every byte consumed. The seed is fixed (override with {@code -Dtests.seed=<n>}) and named
 * in every failure, so a failure replays.
 */
public final class WireTesting {
    /** Random instances per class and test. */
    public static final int ROUNDS = 64;

    private WireTesting() {}

    /** The seed of this run. */
    public static long seed() {
        return Long.getLong("tests.seed", 0x11_11_11L);
    }

    /** Checks {@link #ROUNDS} random instances of {@code random} for a round trip through {@code reader}. */
    public static <T extends Writeable> void assertRoundTrips(Function<Random, T> random, Writeable.Reader<T> reader)
            throws IOException {
        Random r = new Random(seed());
        for (int i = 0; i < ROUNDS; i++) {
            assertRoundTrip(random.apply(r), reader, "seed " + seed() + ", round " + i);
        }
    }

    /** Writes {@code original}, reads it back with {@code reader}: equal, same hash, nothing left over. */
    public static <T extends Writeable> T assertRoundTrip(T original, Writeable.Reader<T> reader, String context)
            throws IOException {
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            original.writeTo(out);
            try (StreamInput in = out.bytes().streamInput()) {
                T read = reader.read(in);
                assertNotSame(original, read, context);
                assertEquals(original, read, context);
                assertEquals(original.hashCode(), read.hashCode(), context);
                assertEquals(0, in.available(), context + ": the reader left bytes unread");
                return read;
            }
        }
    }

    /** The bytes {@code value} writes. */
    public static byte[] bytes(Writeable value) throws IOException {
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            value.writeTo(out);
            return BytesReference.toBytes(out.bytes());
        }
    }

    /** A short string, sometimes with non-ASCII characters. */
    public static String string(Random r) {
        int length = 1 + r.nextInt(12);
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < length; i++) {
            s.append(r.nextInt(8) == 0 ? (char) ('à' + r.nextInt(20)) : (char) ('a' + r.nextInt(26)));
        }
        return s.toString();
    }

    /** {@code null} or a string. */
    public static String optionalString(Random r) {
        return r.nextBoolean() ? null : string(r);
    }

    /** A JSON-like map as the core's answers and arguments are: strings, numbers, booleans, lists, maps. */
    public static Map<String, Object> genericMap(Random r) {
        return genericMap(r, 2);
    }

    private static Map<String, Object> genericMap(Random r, int depth) {
        Map<String, Object> map = new LinkedHashMap<>();
        int size = r.nextInt(5);
        for (int i = 0; i < size; i++) {
            map.put(string(r), value(r, depth));
        }
        return map;
    }

    private static Object value(Random r, int depth) {
        return switch (r.nextInt(depth > 0 ? 7 : 5)) {
            case 0 -> string(r);
            case 1 -> r.nextLong();
            case 2 -> r.nextInt();
            case 3 -> r.nextBoolean();
            case 4 -> r.nextDouble();
            case 5 -> genericMap(r, depth - 1);
            default -> {
                List<Object> list = new ArrayList<>();
                int size = r.nextInt(4);
                for (int i = 0; i < size; i++) {
                    list.add(value(r, depth - 1));
                }
                yield list;
            }
        };
    }

    /** A node as a nodes response names it. */
    public static DiscoveryNode node(Random r) {
        TransportAddress address = new TransportAddress(InetAddress.getLoopbackAddress(), 9300 + r.nextInt(100));
        return new DiscoveryNode(string(r), string(r), address, Map.of(), Set.of(), VersionInformation.CURRENT);
    }
}
