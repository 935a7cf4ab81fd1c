package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.core.TimeValue;
import org.eslm.settings.LockSettings;
import org.junit.jupiter.api.Test;

/** The {@code locks.audit.*} settings (docs/API.md "Lock history"): defaults, validation, what reaches the core. */
class AuditSettingsTest {

    @Test
    void offByDefaultSoTheCoreKeepsNoHistory() {
        LockSettings.Values v = LockSettings.Values.of(Settings.EMPTY);
        assertEquals(
                new LockSettings.Audit(false, 10_000, TimeValue.timeValueDays(7), TimeValue.timeValueSeconds(1)),
                v.audit());
        assertEquals(0, v.coreConfig().get("audit_capacity"));
        assertEquals(false, v.asMap().get("locks.audit.enabled"));
    }

    @Test
    void onTheCoreKeepsTheBufferSize() {
        LockSettings.Values v = LockSettings.Values.of(Settings.builder()
                .put("locks.audit.enabled", true)
                .put("locks.audit.buffer_size", 3)
                .put("locks.audit.retention", "30d")
                .build());
        assertEquals(3, v.coreConfig().get("audit_capacity"));
        assertEquals(TimeValue.timeValueDays(30), v.audit().retention());
        assertTrue(LockSettings.DYNAMIC.contains(LockSettings.AUDIT_ENABLED), "a dynamic setting");
    }

    @Test
    void invalidValuesAreRefusedNamingTheSetting() {
        for (Map.Entry<String, String> bad : Map.of(
                        "locks.audit.buffer_size", "0",
                        "locks.audit.retention", "10m",
                        "locks.audit.flush_interval", "10ms")
                .entrySet()) {
            Settings s = Settings.builder().put(bad.getKey(), bad.getValue()).build();
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> LockSettings.Values.of(s), bad.toString());
            assertTrue(e.getMessage().contains(bad.getKey()), e.getMessage());
        }
        Settings notABoolean =
                Settings.builder().put("locks.audit.enabled", "yes please").build();
        assertThrows(IllegalArgumentException.class, () -> LockSettings.Values.of(notABoolean));
    }
}
