package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.elasticsearch.core.TimeValue;
import org.junit.jupiter.api.Test;

/**
 * The master's rule for failing a silent owner's primary (docs/ARCHITECTURE.md "Silent owners"), on
 * a clock the test moves: only after a silence longer than the bound since a question it answered
 * "yours", never for its own copy or without a replica to promote, never counting its own pause,
 * and never "yours" again once decided.
 */
class SilentOwnersTest {
    private static final TimeValue BOUND = TimeValue.timeValueMillis(3500);
    private long now = TimeUnit.SECONDS.toNanos(100);
    private final SilentOwners watch = new SilentOwners(() -> BOUND, () -> now, true);

    private static final SilentOwners.Seen OWNED_BY_A = new SilentOwners.Seen(0, "a", 4, true);

    private void pass(long millis) {
        now += TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /** Looks every 250 ms for {@code millis}, as the master's tick does; what was condemned. */
    private List<SilentOwners.Seen> lookFor(long millis, SilentOwners.Seen... seen) {
        List<SilentOwners.Seen> condemned = List.of();
        for (long t = 0; t < millis; t += 250) {
            pass(250);
            List<SilentOwners.Seen> now = watch.look(true, "master", false, List.of(seen));
            if (now.isEmpty() == false) {
                condemned = now;
            }
        }
        return condemned;
    }

    @Test
    void anOwnerSilentPastTheBoundIsCondemnedOnceAndAnsweredNoAfter() {
        assertTrue(watch.heard(0, 4, "a"));
        assertEquals(List.of(), lookFor(3500, OWNED_BY_A), "not past the bound yet");
        assertEquals(List.of(OWNED_BY_A), lookFor(250, OWNED_BY_A));
        assertFalse(watch.heard(0, 4, "a"), "a condemned owner is never confirmed again");
        assertEquals(List.of(), lookFor(1000, OWNED_BY_A), "asked once, then again only after a while");
        assertEquals(List.of(OWNED_BY_A), lookFor(5000, OWNED_BY_A), "asked again while the state still shows it");
    }

    @Test
    void anOwnerThatKeepsAskingIsNeverCondemned() {
        for (int i = 0; i < 100; i++) {
            assertTrue(watch.heard(0, 4, "a"));
            assertEquals(List.of(), lookFor(3000, OWNED_BY_A));
        }
    }

    @Test
    void anOwnerNeverHeardInItsEpochIsNotWatched() {
        assertEquals(List.of(), lookFor(60_000, OWNED_BY_A));
        assertTrue(watch.heard(0, 3, "a"), "heard in an older epoch");
        assertEquals(List.of(), lookFor(60_000, OWNED_BY_A), "the epoch it was heard in is not the one shown");
    }

    @Test
    void theMastersOwnCopyAndACopyWithoutReplicaAreNeverFailed() {
        SilentOwners.Seen onMaster = new SilentOwners.Seen(0, "master", 4, true);
        assertTrue(watch.heard(0, 4, "master"));
        assertEquals(List.of(), lookFor(60_000, onMaster));

        SilentOwners.Seen alone = new SilentOwners.Seen(1, "a", 4, false);
        assertTrue(watch.heard(1, 4, "a"));
        assertEquals(List.of(), lookFor(60_000, alone));
    }

    @Test
    void theMastersOwnPauseRestartsEverySilence() {
        assertTrue(watch.heard(0, 4, "a"));
        lookFor(500, OWNED_BY_A);
        pass(30_000); // the master was frozen: its next look is 30 s after the last
        assertEquals(List.of(), watch.look(true, "master", false, List.of(OWNED_BY_A)));
        assertEquals(List.of(), lookFor(3250, OWNED_BY_A), "the silence counts from the master's resume");
        assertEquals(List.of(OWNED_BY_A), lookFor(500, OWNED_BY_A));
    }

    @Test
    void aNodeThatIsNotTheMasterForgetsWhatItHeard() {
        assertTrue(watch.heard(0, 4, "a"));
        pass(250);
        assertEquals(List.of(), watch.look(false, "master", false, List.of(OWNED_BY_A)));
        assertEquals(List.of(), lookFor(60_000, OWNED_BY_A), "elected again: watches start from the next question");
    }

    @Test
    void withMemoryDurabilityNoOwnerIsEverFailed() {
        SilentOwners memory = new SilentOwners(() -> BOUND, () -> now, false);
        assertTrue(memory.heard(0, 4, "a"));
        pass(60_000);
        assertEquals(List.of(), memory.look(true, "master", true, List.of(OWNED_BY_A)));
    }

    @Test
    void aNewOwnerOrEpochStartsAFreshWatch() {
        assertTrue(watch.heard(0, 4, "a"));
        assertEquals(List.of(OWNED_BY_A), lookFor(4000, OWNED_BY_A));
        SilentOwners.Seen promoted = new SilentOwners.Seen(0, "b", 5, true);
        assertEquals(List.of(), lookFor(10_000, promoted), "b not heard yet");
        assertTrue(watch.heard(0, 5, "b"));
        assertEquals(List.of(), lookFor(3000, promoted));
        assertEquals(List.of(promoted), lookFor(1000, promoted));
    }

    /** With copy leases, an owner the master never heard (frozen or cut off right after it opened) is failed over too. */
    @Test
    void withCopyLeasesAnOwnerIsWatchedFromTheFirstLookThatShowsIt() {
        for (int t = 0; t < 15; t++) {
            pass(250);
            assertEquals(List.of(), watch.look(true, "master", true, List.of(OWNED_BY_A)));
        }
        pass(250);
        assertEquals(List.of(OWNED_BY_A), watch.look(true, "master", true, List.of(OWNED_BY_A)));
    }
}
