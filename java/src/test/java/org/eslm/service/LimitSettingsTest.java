package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.elasticsearch.common.settings.Settings;
import org.eslm.settings.LockSettings;
import org.junit.jupiter.api.Test;

/** The {@code locks.limits.*} settings: defaults, validation, what reaches the core. */
class LimitSettingsTest {

    @Test
    void defaultsReachTheCoreUnderItsNames() {
        LockSettings.Values v = LockSettings.Values.of(Settings.EMPTY);
        @SuppressWarnings("unchecked")
        Map<String, Object> limits = (Map<String, Object>) v.coreConfig().get("limits");
        assertEquals(1_000_000, limits.get("max_locks"));
        assertEquals(100_000, limits.get("max_sessions"));
        assertEquals(100_000, limits.get("max_waiters"));
        assertEquals(100_000, limits.get("max_locks_per_owner"));
        assertEquals(10_000, limits.get("max_waiters_per_owner"));
        assertEquals(1_000, limits.get("max_sessions_per_owner"));
        long heapTenth = Runtime.getRuntime().maxMemory() / 10;
        assertEquals((double) heapTenth, ((Number) limits.get("max_memory_bytes")).doubleValue(), heapTenth * 0.01);
        assertTrue(v.asMap().containsKey("locks.limits.max_memory"));
    }

    @Test
    void explicitValuesAreParsed() {
        LockSettings.Values v = LockSettings.Values.of(Settings.builder()
                .put("locks.limits.max_memory", "2mb")
                .put("locks.limits.max_sessions_per_owner", 3)
                .build());
        @SuppressWarnings("unchecked")
        Map<String, Object> limits = (Map<String, Object>) v.coreConfig().get("limits");
        assertEquals(2L * 1024 * 1024, limits.get("max_memory_bytes"));
        assertEquals(3, limits.get("max_sessions_per_owner"));
    }

    @Test
    void invalidValuesAreRefusedNamingTheSetting() {
        for (Map.Entry<String, String> bad : Map.of(
                        "locks.limits.max_locks", "0",
                        "locks.limits.max_waiters_per_owner", "-1",
                        "locks.limits.max_sessions", "many",
                        "locks.limits.max_memory", "0b",
                        "locks.limits.max_locks_per_owner", "0")
                .entrySet()) {
            Settings s = Settings.builder().put(bad.getKey(), bad.getValue()).build();
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> LockSettings.Values.of(s), bad.toString());
            assertTrue(e.getMessage().contains(bad.getKey()), e.getMessage());
        }
    }

    @Test
    void coreLimitNamesMapToTheirSettings() {
        assertEquals("locks.limits.max_memory", LockSettings.limitSetting("max_memory"));
        assertEquals("locks.limits.max_sessions_per_owner", LockSettings.limitSetting("max_sessions_per_owner"));
        assertEquals("locks.max_waiters", LockSettings.limitSetting("max_waiters_per_key"));
        assertEquals("session_ids", LockSettings.limitSetting("session_ids"));
    }
}
