package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.core.TimeValue;
import org.eslm.settings.LockSettings;
import org.junit.jupiter.api.Test;

/** The recovery grace never ends before a lease the dead owner may have granted (docs/RELIABILITY.md). */
class RecoveryGraceTest {
    private static final TimeValue TEN_MINUTES = TimeValue.timeValueMinutes(10);

    @Test
    void unsetItCoversTheLeaseMaximumAndFaultDetection() {
        assertEquals(TimeValue.timeValueSeconds(630), LockSettings.recoveryGrace(Settings.EMPTY, TEN_MINUTES));
        LockSettings.checkRecoveryGrace(Settings.EMPTY, TEN_MINUTES);
    }

    @Test
    void anExplicitGraceBelowTheLeaseMaximumIsRefusedWithBothSettingsNamed() {
        Settings settings = Settings.builder().put("locks.recovery.grace", "5s").build();
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> LockSettings.checkRecoveryGrace(settings, TEN_MINUTES));
        assertTrue(
                e.getMessage().contains("[locks.recovery.grace] (5s) must be at least [locks.lease.max] (10m)"),
                e.getMessage());
        LockSettings.checkRecoveryGrace(settings, TimeValue.timeValueSeconds(5));
        assertEquals(
                TEN_MINUTES,
                LockSettings.recoveryGrace(settings, TEN_MINUTES),
                "in force, it is never shorter than the leases, whatever slipped through");
    }
}
