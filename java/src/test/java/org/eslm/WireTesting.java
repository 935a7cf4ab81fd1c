package org.eslm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import org.elasticsearch.TransportVersion;
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

    /**
     * The transport version of the oldest peer a node of this build meets: a node of Elasticsearch
     * 8.19 (the supported 8.x, {@code es8.version} in pom.xml), in a rolling upgrade to 9.x. Read
     * from Elasticsearch's own table of versions ({@code transport/upper_bounds/8.19.csv} in its
     * jar): on a 9.x build the newest 8.19 it knows, on the 8.19 build its own. The plugin writes
     * nothing gated on it (docs/ARCHITECTURE.md "Formats and versions").
     */
    public static final TransportVersion OLDEST_PEER = oldestPeer();

    private static TransportVersion oldestPeer() {
        try (InputStream in = TransportVersion.class.getResourceAsStream("/transport/upper_bounds/8.19.csv")) {
            String line = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            TransportVersion v819 =
                    TransportVersion.fromId(Integer.parseInt(line.substring(line.lastIndexOf(',') + 1)));
            TransportVersion minimum = TransportVersion.minimumCompatible();
            return v819.id() >= minimum.id() ? v819 : minimum;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Checks {@link #ROUNDS} random instances of {@code random} for a round trip through
     * {@code reader}, to a peer of this build's transport version and to one of {@link #OLDEST_PEER}.
     */
    public static <T extends Writeable> void assertRoundTrips(Function<Random, T> random, Writeable.Reader<T> reader)
            throws IOException {
        Random r = new Random(seed());
        for (int i = 0; i < ROUNDS; i++) {
            T original = random.apply(r);
            assertRoundTrip(original, reader, "seed " + seed() + ", round " + i);
            assertRoundTripAt(original, reader, OLDEST_PEER, "seed " + seed() + ", round " + i + ", oldest peer");
        }
    }

    /**
     * Checks that {@link #ROUNDS} random instances write the same bytes to a peer of
     * {@link #OLDEST_PEER} as to one of this build's version: a message of the plugin's own, with
     * no field of Elasticsearch's that Elasticsearch gates, is the same on 8.19 and 9.x.
     */
    public static <T extends Writeable> void assertSameBytesForEveryPeer(Function<Random, T> random)
            throws IOException {
        Random r = new Random(seed());
        for (int i = 0; i < ROUNDS; i++) {
            T original = random.apply(r);
            assertArrayEquals(
                    bytes(original, TransportVersion.current()),
                    bytes(original, OLDEST_PEER),
                    "seed " + seed() + ", round " + i + ": bytes differ by transport version");
        }
    }

    /** Writes {@code original}, reads it back with {@code reader}: equal, same hash, nothing left over. */
    public static <T extends Writeable> T assertRoundTrip(T original, Writeable.Reader<T> reader, String context)
            throws IOException {
        return assertRoundTripAt(original, reader, TransportVersion.current(), context);
    }

    /** {@link #assertRoundTrip} to a peer of transport version {@code version}. */
    public static <T extends Writeable> T assertRoundTripAt(
            T original, Writeable.Reader<T> reader, TransportVersion version, String context) throws IOException {
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            out.setTransportVersion(version);
            original.writeTo(out);
            try (StreamInput in = out.bytes().streamInput()) {
                in.setTransportVersion(version);
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
        return bytes(value, TransportVersion.current());
    }

    /** The bytes {@code value} writes to a peer of transport version {@code version}. */
    public static byte[] bytes(Writeable value, TransportVersion version) throws IOException {
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            out.setTransportVersion(version);
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
        return node(r, Map.of());
    }

    /** A node with these attributes (e.g. the state format it announces, cluster.PeerFormats). */
    public static DiscoveryNode node(Random r, Map<String, String> attributes) {
        TransportAddress address = new TransportAddress(InetAddress.getLoopbackAddress(), 9300 + r.nextInt(100));
        return new DiscoveryNode(string(r), string(r), address, attributes, Set.of(), VersionInformation.CURRENT);
    }
}
