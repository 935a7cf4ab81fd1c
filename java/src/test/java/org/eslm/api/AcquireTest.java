package org.eslm.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.core.TimeValue;
import org.eslm.NativeTestSupport;
import org.eslm.action.LockOpRequest;
import org.eslm.bridge.NativeOp;
import org.eslm.bridge.NativeRequest;
import org.eslm.rest.RequestBodies;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What another plugin asks through {@link PluginLocks} is parsed as the same REST body would be. */
class AcquireTest {
    private static RequestBodies bodies;

    @BeforeAll
    static void setUp() {
        bodies = NativeTestSupport.bodies(Settings.EMPTY);
    }

    private static LockOpRequest acquire(String key, Acquire acquire) {
        return bodies.request(NativeOp.ACQUIRE, NativeRequest.LOCK_ACQUIRE, key, acquire.body());
    }

    @Test
    void everyOptionBecomesTheRestField() throws Exception {
        Acquire acquire = Acquire.owner("w")
                .shared()
                .tree()
                .priority(Acquire.BACKGROUND)
                .waitFor(TimeValue.timeValueSeconds(2))
                .lease(TimeValue.timeValueMillis(1500))
                .session("s1");
        LockOpRequest request = acquire("/a/b", acquire);
        assertEquals(NativeOp.ACQUIRE, request.op());
        assertEquals("/a/b", request.key());
        assertEquals(2000L, request.waitMs());
        assertEquals("s1", request.session());
        assertEquals(
                Map.of("owner", "w", "mode", "shared", "scope", "tree", "priority", "background", "lease_ms", 1500),
                request.opArgs());
    }

    @Test
    void defaultsAreTheNodesAsOverHttp() throws Exception {
        LockOpRequest request = acquire("k", Acquire.owner("w"));
        assertEquals(LockOpRequest.NO_WAIT, request.waitMs(), "locks.wait.default (0): a try-lock");
        assertEquals(false, request.waits());
        assertEquals(Map.of("owner", "w"), request.opArgs());
    }

    /** (Values the core judges, such as a priority over 9 or an empty owner, are refused by it: test_plugin_locks.py.) */
    @Test
    void badValuesAreRefusedNamingTheField() {
        IllegalArgumentException wait = assertThrows(
                IllegalArgumentException.class,
                () -> acquire("k", Acquire.owner("w").waitFor(TimeValue.timeValueMinutes(6))));
        assertTrue(wait.getMessage().startsWith("[wait]"), wait.getMessage());
    }

    @Test
    void aGrantIsReadFromTheAcquireAnswer() {
        Grant grant = Grant.of(Map.of(
                "acquired",
                true,
                "key",
                "k",
                "owner",
                "w",
                "fencing_token",
                1099511627777L,
                "lease_ms",
                30000,
                "waited_ms",
                12,
                "reentrant",
                false,
                "scope",
                "key"));
        assertEquals(new Grant("k", "w", 1099511627777L, 30000, 12, false, grant.body()), grant);
    }
}
