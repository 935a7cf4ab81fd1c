package org.eslm.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state log's test-only faults (docs/RELIABILITY.md "Disk faults") are off unless the native
 * library is the fault-injection build, whatever the environment says; on, they record the length
 * the disk holds, never going back but for a rewrite.
 */
class StateLogFaultsTest {
    @TempDir
    Path dir;

    @Test
    void aReleaseLibraryHasNoFaultWhateverTheFlaw() {
        assertSame(StateLogFaults.NONE, StateLogFaults.of("eslm-bridge 0.1.0 (lock-core 0.1.0)", "unforced_batches"));
        assertSame(StateLogFaults.NONE, StateLogFaults.of(null, "unforced_batches"));
        assertFalse(StateLogFaults.NONE.skipsForce());
        Path log = dir.resolve(ShardStateLog.FILE_NAME);
        StateLogFaults.NONE.forced(log, 100);
        assertFalse(Files.exists(StateLogFaults.sidecar(log)));
    }

    @Test
    void theFaultInjectionBuildRecordsForcedLengthsAndTakesItsFlawFromTheEnvironmentOnly() throws IOException {
        String version = "eslm-bridge 0.1.0 (lock-core 0.1.0)" + StateLogFaults.BUILD_MARK;
        assertFalse(StateLogFaults.of(version, null).skipsForce());
        assertFalse(StateLogFaults.of(version, "ignores_lease").skipsForce(), "a flaw of the core's");
        StateLogFaults faults = StateLogFaults.of(version, StateLogFaults.UNFORCED_BATCHES);
        assertTrue(faults.skipsForce());

        Path log = dir.resolve(ShardStateLog.FILE_NAME);
        Path sidecar = StateLogFaults.sidecar(log);
        faults.forced(log, 200);
        faults.forced(log, 150); // a force that started before the last one's, ending after it
        assertEquals("200", Files.readString(sidecar));
        faults.rewritten(log, 40); // a checkpoint: a new, shorter file
        assertEquals("40", Files.readString(sidecar));
        faults.deleted(log);
        assertFalse(Files.exists(sidecar));
    }
}
