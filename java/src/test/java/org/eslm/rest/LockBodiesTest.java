package org.eslm.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.elasticsearch.common.io.stream.BytesStreamOutput;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.xcontent.XContentParseException;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.xcontent.XContentParserConfiguration;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.eslm.action.LockOpRequest;
import org.eslm.action.LockOpResponse;
import org.eslm.bridge.NativeOp;
import org.eslm.settings.LockSettings;
import org.junit.jupiter.api.Test;

/** Bodies parse strictly into the core's arguments; requests and responses survive the wire. */
class LockBodiesTest {
    private static final LockSettings.Values DEFAULTS = LockSettings.Values.of(Settings.EMPTY);

    static XContentParser parser(String json) throws IOException {
        return JsonXContent.jsonXContent.createParser(XContentParserConfiguration.EMPTY, json);
    }

    static String rootMessage(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage();
    }

    @Test
    void semaphoreBodiesAreLockBodiesOfScopeSemaphore() throws IOException {
        LockBodies.Args args = LockBodies.semaphoreAcquire(
                "api", parser("{\"owner\":\"w\",\"permits\":2,\"limit\":4,\"wait\":\"1s\"}"), DEFAULTS);
        assertEquals(
                Map.of("owner", "w", "permits", 2L, "limit", 4L, "wait_ms", 1000L, "key", "api", "scope", "semaphore"),
                args);
        LockBodies.Args release = LockBodies.semaphoreKeyed(
                LockBodies.SEMAPHORE_RELEASE, "api", parser("{\"owner\":\"w\",\"fencing_token\":7}"), DEFAULTS);
        assertEquals(Map.of("owner", "w", "fencing_token", 7L, "key", "api", "scope", "semaphore"), release);
        for (String[] bad : new String[][] {
            {"{\"owner\":\"w\"}", "[limit] is required"},
            {"{\"owner\":\"w\",\"limit\":0}", "[limit] must be 1..65535"},
            {"{\"owner\":\"w\",\"limit\":3,\"permits\":70000}", "[permits] must be 1..65535"},
        }) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class,
                    () -> LockBodies.semaphoreAcquire("api", parser(bad[0]), DEFAULTS),
                    bad[0]);
            assertTrue(rootMessage(e).startsWith(bad[1]), rootMessage(e));
        }
        Exception mode = assertThrows(
                XContentParseException.class,
                () -> LockBodies.semaphoreAcquire(
                        "api", parser("{\"owner\":\"w\",\"limit\":3,\"mode\":\"shared\"}"), DEFAULTS));
        assertTrue(rootMessage(mode).contains("mode"), rootMessage(mode));
    }

    @Test
    void acquireBodyMapsNamesAndDurations() throws IOException {
        LockBodies.Args args = LockBodies.acquire(
                "k",
                parser(
                        "{\"owner\":\"w\",\"mode\":\"shared\",\"scope\":\"tree\",\"priority\":\"background\",\"wait\":\"2s\",\"lease\":1500,\"session\":\"s1\"}"),
                DEFAULTS);
        assertEquals(
                Map.of(
                        "owner",
                        "w",
                        "mode",
                        "shared",
                        "scope",
                        "tree",
                        "priority",
                        "background",
                        "wait_ms",
                        2000L,
                        "lease_ms",
                        1500L,
                        "session",
                        "s1",
                        "key",
                        "k"),
                Map.copyOf(args));
        LockBodies.Args minimal = LockBodies.acquire("k", parser("{\"owner\":\"w\"}"), DEFAULTS);
        assertEquals(Map.of("owner", "w", "key", "k"), Map.copyOf(minimal), "try-lock by default: no wait");
        LockSettings.Values waiting = LockSettings.Values.of(
                Settings.builder().put("locks.wait.default", "3s").build());
        assertEquals(
                3000L,
                LockBodies.acquire("k", parser("{\"owner\":\"w\"}"), waiting).get("wait_ms"));
    }

    @Test
    void badAcquireBodiesNameTheField() {
        record Case(String body, String expected) {}
        for (Case c : List.of(
                new Case("{\"owner\":\"w\",\"ownr\":1}", "unknown field [ownr]"),
                new Case("{}", "[owner] is required"),
                new Case("{\"owner\":\"w\",\"mode\":\"x\"}", "[mode] must be one of"),
                new Case("{\"owner\":\"w\",\"scope\":\"branch\"}", "[scope] must be one of"),
                new Case("{\"owner\":\"w\",\"wait\":\"-5s\"}", "[wait]"),
                new Case("{\"owner\":\"w\",\"wait\":-5}", "[wait] must not be negative"),
                new Case("{\"owner\":\"w\",\"wait\":\"forever\"}", "[wait] must be a time value"),
                new Case("{\"owner\":\"w\",\"wait\":\"6m\"}", "[wait] must be at most [5m] (locks.wait.max)"),
                new Case("{\"owner\":\"w\",\"lease\":\"11m\"}", "[lease] must be at most [10m] (locks.lease.max)"),
                new Case("{\"owner\":\"w\",\"lease\":1.5}", "[lease] must be whole milliseconds"),
                new Case("{\"owner\":\"w\",\"priority\":1.5}", "[priority] must be an integer"),
                new Case("{\"owner\":\"w\",\"routing\":\"r\"}", "[routing] is not accepted on a lock"))) {
            Exception e =
                    assertThrows(Exception.class, () -> LockBodies.acquire("k", parser(c.body), DEFAULTS), c.body);
            String text = e.getMessage() + " / " + rootMessage(e);
            assertTrue(text.contains(c.expected), c.body + " -> " + text);
        }
    }

    @Test
    void sessionKeepaliveAndEndBodiesTakeExactlyTheOwner() throws IOException {
        String id = "0_6f1c2a9e4b7d03518ce2f09a7b64d1e5";
        for (var p : List.of(LockBodies.SESSION_KEEPALIVE, LockBodies.SESSION_END)) {
            assertEquals(
                    Map.of("owner", "w", "session", id),
                    Map.copyOf(LockBodies.sessionOwner(p, id, parser("{\"owner\":\"w\"}"))));
            record Case(String body, String expected) {}
            for (Case c : List.of(
                    new Case("{}", "[owner] is required"),
                    new Case("{\"owner\":\"w\",\"ttl\":\"5s\"}", "unknown field [ttl]"),
                    new Case("{\"owner\":\"w\",\"session\":\"0_x\"}", "unknown field [session]"),
                    new Case("{\"owner\":\"w\",\"routing\":\"r\"}", "unknown field [routing]"),
                    new Case("{\"owner\":7}", "owner doesn't support values of type"),
                    new Case("{\"owner\":null}", "owner doesn't support values of type"))) {
                Exception e =
                        assertThrows(Exception.class, () -> LockBodies.sessionOwner(p, id, parser(c.body)), c.body);
                String text = e.getMessage() + " / " + rootMessage(e);
                assertTrue(text.contains(c.expected), c.body + " -> " + text);
            }
        }
        Exception unknown = assertThrows(
                Exception.class,
                () -> LockBodies.sessionOwner(LockBodies.SESSION_END, id, parser("{\"owner\":\"w\",\"x\":1}")));
        assertTrue(unknown.getMessage().contains("[lock_session_end_request] unknown field [x]"), unknown.getMessage());
    }

    @Test
    void ownChecksFailAsIllegalArgumentsAndJsonTypesAsParseErrors() {
        IllegalArgumentException own = assertThrows(
                IllegalArgumentException.class,
                () -> LockBodies.acquire("k", parser("{\"owner\":\"w\",\"mode\":\"sideways\"}"), DEFAULTS));
        assertTrue(own instanceof XContentParseException == false, "our own [mode] check is not a parse error");
        assertTrue(own.getMessage().startsWith("[mode]"), own.getMessage());
        assertThrows(
                XContentParseException.class,
                () -> LockBodies.acquire("k", parser("{\"owner\":\"w\",\"wait\":true}"), DEFAULTS),
                "a JSON type [wait] never takes is a parse error");
        XContentParseException type = assertThrows(
                XContentParseException.class, () -> LockBodies.acquire("k", parser("{\"owner\":17}"), DEFAULTS));
        assertTrue(type.getMessage().contains("owner"), type.getMessage());
        assertThrows(
                XContentParseException.class,
                () -> LockBodies.acquire("k", parser("{\"owner\":\"w\",\"x\":1}"), DEFAULTS));
    }

    @Test
    void routingIsRefusedOnLocksAndKeptForSessionsAndReleaseAll() throws IOException {
        String refused = "[routing] is not accepted on a lock";
        IllegalArgumentException multi = assertThrows(
                IllegalArgumentException.class,
                () -> LockBodies.multiAcquire(
                        parser("{\"owner\":\"w\",\"routing\":\"r\",\"locks\":[{\"key\":\"a\"}]}"), DEFAULTS));
        assertTrue(multi.getMessage().startsWith(refused), multi.getMessage());
        IllegalArgumentException release = assertThrows(
                IllegalArgumentException.class,
                () -> LockBodies.multiRelease(
                        parser("{\"owner\":\"w\",\"routing\":\"r\",\"locks\":[{\"key\":\"a\"}]}"), DEFAULTS));
        assertTrue(release.getMessage().startsWith(refused), release.getMessage());
        LockBodies.Args all =
                LockBodies.multiRelease(parser("{\"owner\":\"w\",\"routing\":\"r\",\"all\":true}"), DEFAULTS);
        assertEquals("r", LockBodies.ownerRouting(all), "release-all goes to the partition its routing names");
        LockBodies.Args session = LockBodies.session(parser("{\"owner\":\"w\"}"), DEFAULTS);
        assertEquals("w", LockBodies.ownerRouting(session), "a session without routing lives with its owner");
        IllegalArgumentException blank = assertThrows(
                IllegalArgumentException.class,
                () -> LockBodies.ownerRouting(
                        LockBodies.session(parser("{\"owner\":\"w\",\"routing\":\" \"}"), DEFAULTS)));
        assertEquals("[routing] must not be blank", blank.getMessage());
        assertTrue(
                LockBodies.acquire("k", parser("{\"owner\":\"w\"}"), DEFAULTS).containsKey("routing") == false);
    }

    /** docs/API.md "Acquisitions": a release or renew names what it ends, never just the owner. */
    @Test
    void releasesAndRenewalsNameTheirAcquisition() throws IOException {
        for (String body : new String[] {"{\"owner\":\"w\"}", "{\"owner\":\"w\",\"scope\":\"tree\"}"}) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class,
                    () -> LockBodies.keyed(LockBodies.RELEASE, "k", parser(body), DEFAULTS));
            assertTrue(rootMessage(e).startsWith("[acquisition] or [fencing_token] is required"), rootMessage(e));
        }
        assertThrows(
                IllegalArgumentException.class,
                () -> LockBodies.keyed(LockBodies.RENEW, "k", parser("{\"owner\":\"w\",\"lease\":\"1m\"}"), DEFAULTS));
        assertEquals(
                Map.of("owner", "w", "acquisition", "a-1", "key", "k"),
                LockBodies.keyed(
                        LockBodies.RELEASE, "k", parser("{\"owner\":\"w\",\"acquisition\":\"a-1\"}"), DEFAULTS));
        IllegalArgumentException resign = assertThrows(
                IllegalArgumentException.class,
                () -> ElectionBodies.keyed(true, "e", parser("{\"candidate\":\"w\"}"), DEFAULTS));
        assertTrue(rootMessage(resign).startsWith("[acquisition] or [term] is required"), rootMessage(resign));
        IllegalArgumentException entries = assertThrows(
                IllegalArgumentException.class,
                () -> LockBodies.multiRelease(
                        parser("{\"owner\":\"w\",\"locks\":[{\"key\":\"a\",\"fencing_token\":3},{\"key\":\"b\"}]}"),
                        DEFAULTS));
        assertTrue(rootMessage(entries).startsWith("[acquisition] or [locks.fencing_token]"), rootMessage(entries));
        LockBodies.multiRelease(
                parser("{\"owner\":\"w\",\"acquisition\":\"m\",\"locks\":[{\"key\":\"a\"}]}"), DEFAULTS);
        LockBodies.multiRelease(parser("{\"owner\":\"w\",\"all\":true}"), DEFAULTS);
        assertThrows(
                IllegalArgumentException.class,
                () -> LockBodies.multiRelease(
                        parser("{\"owner\":\"w\",\"all\":true,\"acquisition\":\"m\"}"), DEFAULTS));
    }

    /** A node of an older state format is sent no acquisition (docs/ARCHITECTURE.md "Formats and versions"). */
    @Test
    void aRequestForAnOlderNodeLeavesTheAcquisitionsOut() throws IOException {
        LockBodies.Args args = LockBodies.multiRelease(
                parser("{\"owner\":\"w\",\"acquisition\":\"m\",\"locks\":[{\"key\":\"a\",\"fencing_token\":3}]}"),
                DEFAULTS);
        LockOpRequest request = LockOpRequest.of(NativeOp.RELEASE_MANY, "a", args);
        Map<String, Object> older = request.withoutAcquisitions().args();
        assertEquals(List.of(Map.of("key", "a")), older.get("locks"));
        assertTrue(older.containsKey("acquisition") == false, older.toString());
        assertEquals("m", request.args().get("acquisition"), "the original is unchanged");
    }

    @Test
    void multiLockBodiesRefuseDuplicatesAndEmptyLists() {
        Exception dup = assertThrows(
                Exception.class,
                () -> LockBodies.multiAcquire(
                        parser("{\"owner\":\"w\",\"locks\":[{\"key\":\"a\"},{\"key\":\"a\"}]}"), DEFAULTS));
        assertTrue(rootMessage(dup).contains("[locks] names key [a] more than once"), rootMessage(dup));
        Exception empty = assertThrows(
                Exception.class, () -> LockBodies.multiAcquire(parser("{\"owner\":\"w\",\"locks\":[]}"), DEFAULTS));
        assertTrue(rootMessage(empty).contains("[locks] must name at least one key"), rootMessage(empty));
        IllegalArgumentException noKey = assertThrows(
                IllegalArgumentException.class,
                () -> LockBodies.multiAcquire(parser("{\"owner\":\"w\",\"locks\":[{\"mode\":\"shared\"}]}"), DEFAULTS));
        assertTrue(rootMessage(noKey).contains("[key] is required"), rootMessage(noKey));
        Exception both = assertThrows(
                Exception.class,
                () -> LockBodies.multiRelease(
                        parser("{\"owner\":\"w\",\"all\":true,\"locks\":[{\"key\":\"a\"}]}"), DEFAULTS));
        assertTrue(rootMessage(both).contains("not both"), rootMessage(both));
    }

    @Test
    void requestsAndResponsesRoundTripOnTheWire() throws IOException {
        // Parsed bodies travel as they are: nested lock items, durations as millis, priorities.
        LockBodies.Args many = LockBodies.multiAcquire(
                parser(
                        "{\"owner\":\"w\",\"wait\":\"2s\",\"priority\":\"background\",\"locks\":[{\"key\":\"a\"},{\"key\":\"b\",\"mode\":\"shared\"}]}"),
                DEFAULTS);
        LockOpRequest multi = LockOpRequest.of(NativeOp.ACQUIRE_MANY, "", many).routed(3, 2000L);
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
