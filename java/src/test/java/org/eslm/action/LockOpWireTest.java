package org.eslm.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.eslm.NativeTestSupport;
import org.eslm.WireTesting;
import org.eslm.bridge.NativeOp;
import org.eslm.core.DeadlockException;
import org.eslm.core.LockConflictException;
import org.eslm.core.LockCorePanicException;
import org.eslm.core.LockException;
import org.eslm.core.LockLimitExceededException;
import org.eslm.core.LockNotHeldException;
import org.eslm.core.LockPartitionUnavailableException;
import org.eslm.core.LockWaitTimeoutException;
import org.eslm.core.SessionNotFoundException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link LockOpRequest} and {@link LockOpResponse} on the transport wire, failures included. */
class LockOpWireTest {
    @BeforeAll
    static void setUp() {
        NativeTestSupport.setUp(); // Elasticsearch exceptions need its logging configured
    }

    /** A request as a REST handler builds it, routed or not, with every optional field present or absent. */
    static LockOpRequest randomRequest(Random r) {
        NativeOp op = NativeOp.values()[r.nextInt(NativeOp.values().length)];
        Map<String, Object> args = WireTesting.genericMap(r);
        args.remove("key");
        args.remove("session");
        args.remove("wait_ms");
        args.remove("reason");
        if (r.nextBoolean()) {
            args.put("key", WireTesting.string(r));
        }
        if (r.nextBoolean()) {
            args.put("session", r.nextInt(8) + "_" + WireTesting.string(r));
        }
        if (r.nextBoolean()) {
            args.put("wait_ms", (long) r.nextInt(300_000));
        }
        if (r.nextInt(4) == 0) {
            args.put(
                    "locks",
                    List.of(
                            Map.of("key", WireTesting.string(r)),
                            Map.of("key", "/" + WireTesting.string(r), "scope", "tree")));
        }
        String routingValue = r.nextInt(4) == 0 ? null : WireTesting.string(r);
        String reason = WireTesting.optionalString(r);
        if (reason != null) {
            args.put("reason", reason);
        }
        LockOpRequest request = LockOpRequest.of(op, routingValue, args);
        if (r.nextBoolean()) {
            return request;
        }
        long waitLeft = request.waitMs() == LockOpRequest.NO_WAIT
                ? LockOpRequest.NO_WAIT
                : r.nextInt(1 + (int) request.waitMs());
        return request.routed(r.nextInt(64), waitLeft);
    }

    /** Each of the lock outcomes the owner sends back as data. */
    static LockException randomFailure(Random r) {
        String key = WireTesting.string(r);
        String message = WireTesting.string(r);
        return switch (r.nextInt(9)) {
            case 0 -> new LockConflictException(message, key, List.of(WireTesting.string(r), WireTesting.string(r)));
            case 1 -> new LockNotHeldException(message, key, WireTesting.string(r));
            case 2 -> new LockWaitTimeoutException(message, key, r.nextInt(100_000));
            case 3 -> new DeadlockException(message, key, List.of(WireTesting.string(r), WireTesting.string(r)));
            case 4 -> new SessionNotFoundException(message, WireTesting.string(r));
            case 5 -> new LockLimitExceededException(message, "max_waiters_per_key", r.nextInt(1000));
            case 6 -> new LockCorePanicException(message, r.nextInt(64), 1 + r.nextInt(1000));
            case 7 -> new LockPartitionUnavailableException(message, r.nextInt(2) == 0 ? 0 : r.nextInt(60_000));
            default ->
                new LockPartitionUnavailableException(message, 0)
                        .withAppliedAnswer(Map.of("released", true, "key", key, "fencing_token", r.nextLong(1L << 50)));
        };
    }

    static LockOpResponse randomResponse(Random r) {
        return r.nextInt(3) == 0
                ? LockOpResponse.failure(randomFailure(r))
                : new LockOpResponse(WireTesting.genericMap(r));
    }

    @Test
    void requestsRoundTrip() throws IOException {
        WireTesting.assertRoundTrips(LockOpWireTest::randomRequest, LockOpRequest::new);
    }

    /** The same bytes to a peer of any transport version (docs/ARCHITECTURE.md "Formats and versions"). */
    @Test
    void requestsAndResponsesAreTheSameBytesForEveryPeerVersion() throws IOException {
        WireTesting.assertSameBytesForEveryPeer(LockOpWireTest::randomRequest);
        WireTesting.assertSameBytesForEveryPeer(LockOpWireTest::randomResponse);
    }

    @Test
    void responsesRoundTripWithTheirBodyOrTheirFailure() throws IOException {
        WireTesting.assertRoundTrips(LockOpWireTest::randomResponse, LockOpResponse::new);
    }

    @Test
    void aFailureComesBackAsTheSameTypedException() throws IOException {
        Random r = new Random(WireTesting.seed());
        for (int i = 0; i < WireTesting.ROUNDS; i++) {
            LockException failure = randomFailure(r);
            LockOpResponse read =
                    WireTesting.assertRoundTrip(LockOpResponse.failure(failure), LockOpResponse::new, "round " + i);
            LockException rebuilt = read.failureException();
            assertEquals(failure.getClass(), rebuilt.getClass());
            assertEquals(failure.getMessage(), rebuilt.getMessage());
            assertEquals(failure.status(), rebuilt.status());
            for (String key : failure.getMetadataKeys()) {
                assertEquals(failure.getMetadata(key), rebuilt.getMetadata(key), key);
            }
            assertEquals(
                    ElasticsearchException.getExceptionName(failure), ElasticsearchException.getExceptionName(rebuilt));
        }
        assertNull(new LockOpResponse(Map.of("released", true)).failureException(), "a success carries no failure");
    }

    @Test
    void anAppliedAnswerComesBackWithTheUnavailableFailureAndNamesTheRetrysToken() throws IOException {
        LockException failure = new LockPartitionUnavailableException("moving", 0)
                .withAppliedAnswer(Map.of("released", true, "key", "k", "fencing_token", 1099511627781L));
        LockOpResponse read = WireTesting.assertRoundTrip(LockOpResponse.failure(failure), LockOpResponse::new, "");
        Map<String, Object> applied = ((LockPartitionUnavailableException) read.failureException()).appliedAnswer();
        assertEquals(1099511627781L, ((Number) applied.get("fencing_token")).longValue());
        assertNull(new LockPartitionUnavailableException("moving", 0).appliedAnswer());

        LockOpRequest release = LockOpRequest.of(NativeOp.RELEASE, "k", Map.of("key", "k", "owner", "w"));
        LockOpRequest retry = release.withOpArg("fencing_token", applied.get("fencing_token"));
        assertEquals(Map.of("owner", "w", "fencing_token", applied.get("fencing_token")), retry.opArgs());
        assertEquals(release.key(), retry.key());
        assertEquals(Map.of("owner", "w"), release.opArgs(), "the original is unchanged");
    }

    @Test
    void typedFieldsAreTakenOutOfTheBodyAndMergedBackForTheCore() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("owner", "w");
        body.put("key", "k");
        body.put("session", "3_6f1c2a9e4b7d03518ce2f09a7b64d1e5");
        body.put("wait_ms", 5000L);
        LockOpRequest request = LockOpRequest.of(NativeOp.ACQUIRE, "r", body);
        assertEquals("k", request.key());
        assertEquals("3_6f1c2a9e4b7d03518ce2f09a7b64d1e5", request.session());
        assertEquals(5000L, request.waitMs());
        assertTrue(request.waits());
        assertEquals(Map.of("owner", "w"), request.opArgs(), "only the op's own arguments stay in the map");
        assertEquals(LockOpRequest.UNROUTED, request.partition());

        LockOpRequest routed = request.routed(3, 4200L);
        assertEquals(
                Map.of("owner", "w", "key", "k", "session", "6f1c2a9e4b7d03518ce2f09a7b64d1e5", "wait_ms", 4200L),
                routed.args(),
                "the core sees the key, its own session id and the wait left");
        assertTrue(routed.waits(), "a routed waiter stays cancellable");

        LockOpRequest many = LockOpRequest.of(
                NativeOp.ACQUIRE_MANY,
                "a",
                Map.of(
                        "owner",
                        "w",
                        "locks",
                        List.of(
                                Map.of("key", "a"),
                                Map.of("key", "/t/x", "scope", "tree"),
                                Map.of("key", "{t}x"),
                                Map.of("key", "/{t}x/y", "scope", "tree"))));
        assertEquals(
                List.of("a", "/t", "t", "t"),
                many.lockRoutingValues(),
                "a tree lock routes by its tree, a hash tag by the tag");

        LockOpRequest forceRelease =
                LockOpRequest.of(NativeOp.FORCE_RELEASE, "k", Map.of("key", "k", "reason", "stuck worker"));
        assertEquals("stuck worker", forceRelease.reason());
        assertEquals(
                Map.of("key", "k", "reason", "stuck worker"),
                forceRelease.args(),
                "the core records the reason in the lock history");
    }

    @Test
    void opsTravelByTheirNumberAndUnknownNumbersAreRefused() throws IOException {
        for (NativeOp op : NativeOp.values()) {
            assertEquals(op, NativeOp.fromCode(op.code()));
        }
        int next = NativeOp.values()[NativeOp.values().length - 1].code() + 1;
        for (int unknown : new int[] {0, -1, next, 99, 127, Integer.MAX_VALUE}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NativeOp.fromCode(unknown));
            assertTrue(e.getMessage().contains("[" + unknown + "]"), e.getMessage());
        }

        // Find the op's byte: the only difference between two requests that differ in their op.
        byte[] acquire = WireTesting.bytes(LockOpRequest.of(NativeOp.ACQUIRE, "k", Map.of()));
        byte[] forceRelease = WireTesting.bytes(LockOpRequest.of(NativeOp.FORCE_RELEASE, "k", Map.of()));
        assertEquals(acquire.length, forceRelease.length);
        int at = -1;
        for (int i = 0; i < acquire.length; i++) {
            if (acquire[i] != forceRelease[i]) {
                assertEquals(-1, at, "the requests differ in one byte only");
                at = i;
            }
        }
        assertEquals(NativeOp.ACQUIRE.code(), acquire[at]);
        assertEquals(NativeOp.FORCE_RELEASE.code(), forceRelease[at], "the number, not the declaration order");
        assertNotEquals(NativeOp.FORCE_RELEASE.ordinal(), NativeOp.FORCE_RELEASE.code());

        byte[] unknownOp = acquire.clone();
        unknownOp[at] = 127; // a one-byte vint no op has
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> new LockOpRequest(StreamInput.wrap(unknownOp)));
        assertTrue(e.getMessage().contains("unknown lock op number [127]"), e.getMessage());
    }
}
