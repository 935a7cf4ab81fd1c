package org.eslm.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.common.io.stream.BytesStreamOutput;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.xcontent.XContentParseException;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.xcontent.XContentParserConfiguration;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.eslm.NativeTestSupport;
import org.eslm.action.LockOpRequest;
import org.eslm.action.LockOpResponse;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.settings.LockSettings;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the REST layer does with a body around the core's reading of it (the field rules are the
 * core's, tested in rust/lock-jni {@code ops/requests/tests.rs} and over HTTP by
 * {@code test_bad_input.py}): the body read whole with Elasticsearch's tokenizer, refusals thrown
 * as the type the core names, the answer routed, and the request carried over the wire.
 */
class RequestBodiesTest {
    private static RequestBodies bodies;

    @BeforeAll
    static void setUp() {
        bodies = NativeTestSupport.bodies(
                Settings.builder().put("locks.max_keys_per_request", 3).build());
    }

    static XContentParser parser(String json) throws IOException {
        return JsonXContent.jsonXContent.createParser(XContentParserConfiguration.EMPTY, json);
    }

    private static LockOpRequest acquire(String key, String body) throws IOException {
        return bodies.request(NativeOp.ACQUIRE, NativeRequest.LOCK_ACQUIRE, key, parser(body));
    }

    private static LockOpRequest multi(NativeOp op, NativeRequest kind, String body) throws IOException {
        return bodies.request(op, kind, null, parser(body));
    }

    @Test
    void anAcquireIsTheCoresArgumentsRoutedByItsKey() throws IOException {
        LockOpRequest request = acquire("/t{x}/b", "{\"owner\":\"w\",\"wait\":\"2s\",\"scope\":\"tree\"}");
        assertEquals("/t{x}/b", request.key());
        assertEquals(2000L, request.waitMs());
        assertTrue(request.waits());
        assertEquals("x", request.routingValue(), "a tree routes by its first segment's hash tag");
        assertEquals(Map.of("owner", "w", "scope", "tree"), request.opArgs());
        assertEquals(false, request.preempts());
        assertTrue(acquire("k", "{\"owner\":\"w\",\"preempt\":\"1s\"}").preempts());
    }

    @Test
    void refusalsAreTheTypeTheCoreNames() {
        IllegalArgumentException own =
                assertThrows(IllegalArgumentException.class, () -> acquire("k", "{\"owner\":\"w\",\"mode\":\"x\"}"));
        assertTrue(own instanceof XContentParseException == false, "a bad value is not a parse error");
        assertTrue(own.getMessage().startsWith("[mode]"), own.getMessage());
        XContentParseException type = assertThrows(XContentParseException.class, () -> acquire("k", "{\"owner\":17}"));
        assertTrue(type.getMessage().contains("owner"), type.getMessage());
        XContentParseException unknown =
                assertThrows(XContentParseException.class, () -> acquire("k", "{\"owner\":\"w\",\"ownr\":1}"));
        assertTrue(unknown.getMessage().contains("[lock_acquire_request] unknown field [ownr]"), unknown.getMessage());
    }

    /** What the tokenizer cannot read fails naming the field or the request, before the core sees it. */
    @Test
    void aBodyTheTokenizerCannotReadIsAParseErrorNamingTheField() throws IOException {
        byte[] badUtf8 = "{\"owner\":\"ab\u00ff\"}".getBytes(StandardCharsets.ISO_8859_1);
        XContentParser parser = JsonXContent.jsonXContent.createParser(XContentParserConfiguration.EMPTY, badUtf8);
        XContentParseException utf8 = assertThrows(
                XContentParseException.class,
                () -> bodies.request(NativeOp.ACQUIRE, NativeRequest.LOCK_ACQUIRE, "k", parser));
        assertTrue(utf8.getMessage().contains("failed to parse field [owner]"), utf8.getMessage());
        XContentParseException array = assertThrows(XContentParseException.class, () -> acquire("k", "[\"w\"]"));
        assertTrue(array.getMessage().contains("[lock_acquire_request]"), array.getMessage());
    }

    @Test
    void multiLocksRouteByTheirFirstKeyAndKnowEachKeysRouting() throws IOException {
        LockOpRequest many = multi(
                NativeOp.ACQUIRE_MANY,
                NativeRequest.LOCK_MULTI_ACQUIRE,
                "{\"owner\":\"w\",\"locks\":[{\"key\":\"{o}a\"},{\"key\":\"{o}b\",\"mode\":\"shared\"}]}");
        assertEquals("o", many.routingValue());
        assertEquals(List.of("o", "o"), many.lockRoutingValues());
        IllegalArgumentException four = assertThrows(
                IllegalArgumentException.class,
                () -> multi(
                        NativeOp.ACQUIRE_MANY,
                        NativeRequest.LOCK_MULTI_ACQUIRE,
                        "{\"owner\":\"w\",\"locks\":[{\"key\":\"a\"},{\"key\":\"b\"},{\"key\":\"c\"},{\"key\":\"d\"}]}"));
        assertTrue(four.getMessage().startsWith("[locks] names more than 3 keys"), four.getMessage());
    }

    @Test
    void sessionsAndReleaseAllRouteByTheRoutingTheCoreAnswers() throws IOException {
        LockOpRequest all = multi(
                NativeOp.RELEASE_MANY,
                NativeRequest.LOCK_MULTI_RELEASE,
                "{\"owner\":\"w\",\"routing\":\"r\",\"all\":true}");
        assertEquals("r", all.routingValue());
        LockOpRequest session = multi(NativeOp.SESSION_CREATE, NativeRequest.LOCK_SESSION, "{\"owner\":\"w\"}");
        assertEquals("w", session.routingValue(), "a session without routing lives with its owner");
        LockOpRequest semaphore = bodies.request(
                NativeOp.ACQUIRE, NativeRequest.SEMAPHORE_ACQUIRE, "{s}1", parser("{\"owner\":\"w\",\"limit\":2}"));
        assertEquals("s", semaphore.routingValue());
        assertEquals("semaphore", semaphore.opArgs().get("scope"));
    }

    /** A node of an older state format is sent no acquisition (docs/ARCHITECTURE.md "Formats and versions"). */
    @Test
    void aRequestForAnOlderNodeLeavesTheAcquisitionsOut() throws IOException {
        LockOpRequest request = multi(
                NativeOp.RELEASE_MANY,
                NativeRequest.LOCK_MULTI_RELEASE,
                "{\"owner\":\"w\",\"acquisition\":\"m\",\"locks\":[{\"key\":\"a\",\"fencing_token\":3}]}");
        Map<String, Object> older = request.withoutAcquisitions().args();
        assertEquals(List.of(Map.of("key", "a")), older.get("locks"));
        assertTrue(older.containsKey("acquisition") == false, older.toString());
        assertEquals("m", request.args().get("acquisition"), "the original is unchanged");
    }

    @Test
    void aForceReleaseKeepsItsReasonForTheLogAndTheCore() throws IOException {
        LockOpRequest forced = bodies.request(
                NativeOp.FORCE_RELEASE, NativeRequest.LOCK_FORCE_RELEASE, "k", parser("{\"reason\":\"stuck\"}"));
        assertEquals("stuck", forced.reason());
        assertEquals("stuck", forced.args().get("reason"));
        LockOpRequest bare = bodies.request(NativeOp.FORCE_RELEASE, NativeRequest.LOCK_FORCE_RELEASE, "k", Map.of());
        assertEquals("k", bare.routingValue());
    }

    /** Owners are bounded as the core reads the body; a key over 512 bytes is the core's refusal when it is locked. */
    @Test
    void ownersOver512Utf8BytesAreRefusedNamingTheField() throws IOException {
        String owner512 = "ö".repeat(255) + "xy";
        assertEquals(
                owner512,
                acquire("k", "{\"owner\":\"" + owner512 + "\"}").opArgs().get("owner"));
        IllegalArgumentException owner = assertThrows(
                IllegalArgumentException.class, () -> acquire("k", "{\"owner\":\"" + "ü".repeat(257) + "\"}"));
        assertTrue(owner.getMessage().startsWith("[owner] must be at most 512 bytes"), owner.getMessage());
    }

    /** A body is bounded before it is read: 413 as Elasticsearch answers a body over its own limit. */
    @Test
    void aBodyLongerThanTheLimitsAllowIs413BeforeParsing() {
        LockSettings.Values threeKeys = LockSettings.Values.of(
                Settings.builder().put("locks.max_keys_per_request", 3).build());
        long max = threeKeys.maxBodyBytes();
        assertEquals(16 * 1024 + 3 * 4 * 1024, max);
        LockRestHandler.checkBodyLength(max, threeKeys);
        ElasticsearchStatusException e = assertThrows(
                ElasticsearchStatusException.class, () -> LockRestHandler.checkBodyLength(max + 1, threeKeys));
        assertEquals(RestStatus.REQUEST_ENTITY_TOO_LARGE, e.status());
        assertTrue(e.getMessage().contains("locks.max_keys_per_request"), e.getMessage());
    }

    @Test
    void requestsAndResponsesRoundTripOnTheWire() throws IOException {
        LockOpRequest multi = multi(
                        NativeOp.ACQUIRE_MANY,
                        NativeRequest.LOCK_MULTI_ACQUIRE,
                        "{\"owner\":\"w\",\"wait\":\"2s\",\"priority\":\"background\",\"locks\":[{\"key\":\"a\"},{\"key\":\"b\",\"mode\":\"shared\"}]}")
                .routed(3, 2000L);
        LockOpRequest request = LockOpRequest.of(NativeOp.ACQUIRE, "k/ü", Map.of("owner", "w", "wait_ms", 5L));
        LockOpResponse response = new LockOpResponse(
                Map.of("acquired", true, "fencing_token", Long.MAX_VALUE, "locks", List.of(Map.of("key", "a"))));
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            multi.writeTo(out);
            request.writeTo(out);
            response.writeTo(out);
            try (StreamInput in = out.bytes().streamInput()) {
                LockOpRequest multiRead = new LockOpRequest(in);
                assertEquals(multi, multiRead);
                assertEquals(3, multiRead.partition());
                assertEquals(2000L, multiRead.args().get("wait_ms"));
                assertEquals("shared", ((Map<?, ?>) ((List<?>) multiRead.args().get("locks")).get(1)).get("mode"));
                assertEquals(request, new LockOpRequest(in));
                assertEquals(response, new LockOpResponse(in));
            }
        }
    }
}
