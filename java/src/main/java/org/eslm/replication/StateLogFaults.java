package org.eslm.replication;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Test-only faults of the state log (docs/RELIABILITY.md "Disk faults"), live only when the loaded
 * native library is the fault-injection build (its version ends with {@link #BUILD_MARK}; the
 * release library never does), so that no setting or environment of a released node can switch
 * them on:
 *
 * <ul>
 *   <li><b>forced lengths</b>: after every force of a log, and after a log is replaced or cut, the
 *   length the disk is known to hold is written beside it, in {@code locks-batches.log.forced}. A
 *   test that kills the node cuts the log back to that length before the restart: what a power
 *   loss does to the writes that were never forced (Jepsen's lazyfs, done by hand);</li>
 *   <li>the flaw {@code unforced_batches} ({@code ESLM_FAULT_FLAW}, as the core's flaws): batches
 *   are appended but never forced, and acknowledged all the same, so that the test shows it
 *   catches a plugin that acknowledges what the disk may not hold.</li>
 * </ul>
 */
final class StateLogFaults {
    private static final Logger logger = LogManager.getLogger(StateLogFaults.class);
    /** What the native version of the fault-injection build ends with (rust/lock-jni jni_api.rs). */
    static final String BUILD_MARK = " [fault-injection]";
    /** The environment variable naming a flaw of the fault-injection build. */
    static final String FLAW_ENV = "ESLM_FAULT_FLAW";
    /** The flaw that acknowledges appended batches without forcing them. */
    static final String UNFORCED_BATCHES = "unforced_batches";
    /** The suffix of the file beside a log that holds its forced length. */
    static final String FORCED_SUFFIX = ".forced";

    /** No fault: the release build, and unit tests. */
    static final StateLogFaults NONE = new StateLogFaults(false, false);

    private final boolean recordsForcedLengths;
    private final boolean unforcedBatches;
    /** The highest forced length recorded per log since it was last replaced or cut. */
    private final Map<Path, Long> forced = new ConcurrentHashMap<>();

    StateLogFaults(boolean recordsForcedLengths, boolean unforcedBatches) {
        this.recordsForcedLengths = recordsForcedLengths;
        this.unforcedBatches = unforcedBatches;
    }

    /** The faults of the library {@code nativeVersion} names, with the flaw {@code flaw} (may be null). */
    static StateLogFaults of(String nativeVersion, String flaw) {
        if (nativeVersion == null || nativeVersion.endsWith(BUILD_MARK) == false) {
            return NONE;
        }
        boolean unforced = UNFORCED_BATCHES.equals(flaw);
        logger.warn(
                "fault injection: lock state logs record their forced lengths in [*{}]{}",
                FORCED_SUFFIX,
                unforced ? "; batches are acknowledged WITHOUT being forced to disk (flaw [" + flaw + "])" : "");
        return new StateLogFaults(true, unforced);
    }

    /** The faults of this node: of the loaded library, with {@code ESLM_FAULT_FLAW}. */
    static StateLogFaults current(String nativeVersion) {
        return of(nativeVersion, nativeVersion.endsWith(BUILD_MARK) ? System.getenv(FLAW_ENV) : null);
    }

    /** Whether batches are acknowledged without a force (the flaw). */
    boolean skipsForce() {
        return unforcedBatches;
    }

    /** {@code file} holds at least {@code length} bytes on disk (a force covered them). */
    void forced(Path file, long length) {
        if (recordsForcedLengths == false) {
            return;
        }
        long highest = forced.merge(file, length, Math::max);
        write(file, highest);
    }

    /** {@code file} was replaced or cut, and forced: it holds {@code length} bytes on disk. */
    void rewritten(Path file, long length) {
        if (recordsForcedLengths == false) {
            return;
        }
        forced.put(file, length);
        write(file, length);
    }

    /** {@code file} was deleted. */
    void deleted(Path file) {
        if (recordsForcedLengths == false) {
            return;
        }
        forced.remove(file);
        try {
            Files.deleteIfExists(sidecar(file));
        } catch (IOException e) {
            logger.warn("fault injection: cannot delete [" + sidecar(file) + "]", e);
        }
    }

    static Path sidecar(Path file) {
        return file.resolveSibling(file.getFileName() + FORCED_SUFFIX);
    }

    /** Written whole (a temporary file renamed over it), so a kill never leaves half a number. */
    private static synchronized void write(Path file, long length) {
        Path sidecar = sidecar(file);
        Path tmp = sidecar.resolveSibling(sidecar.getFileName() + ".tmp");
        try {
            Files.writeString(tmp, Long.toString(length), StandardCharsets.US_ASCII);
            Files.move(tmp, sidecar, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            logger.warn("fault injection: cannot record the forced length of [" + file + "]", e);
        }
    }
}
