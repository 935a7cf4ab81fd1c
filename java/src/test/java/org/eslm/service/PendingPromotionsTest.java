package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The master's promotions while it publishes them (docs/ARCHITECTURE.md "Silent owners"): one is
 * used only while the applied state is older, a failed publication drops it, an older decision
 * never replaces a newer one.
 */
class PendingPromotionsTest {
    private final PendingPromotions promotions = new PendingPromotions();

    @Test
    void aPromotionServesUntilTheAppliedStateCatchesUp() {
        promotions.decided(0, "node-b", 5);
        assertEquals(new PendingPromotions.Promotion("node-b", 5), promotions.newerThan(0, 4));
        assertNull(promotions.newerThan(1, 4), "another partition");
        assertNull(promotions.newerThan(0, 5), "applied: forgotten");
        assertNull(promotions.newerThan(0, 4), "and stays forgotten");
    }

    @Test
    void aFailedPublicationDropsOnlyItsOwnPromotion() {
        promotions.decided(0, "node-b", 5);
        promotions.dropped(0, 4);
        assertEquals("node-b", promotions.newerThan(0, 4).node());
        promotions.dropped(0, 5);
        assertNull(promotions.newerThan(0, 4));
    }

    @Test
    void anOlderDecisionDoesNotReplaceANewerOneAndEachIsAnnounced() {
        AtomicInteger announced = new AtomicInteger();
        promotions.onDecided(announced::incrementAndGet);
        promotions.decided(0, "node-c", 6);
        promotions.decided(0, "node-b", 5);
        assertEquals(new PendingPromotions.Promotion("node-c", 6), promotions.newerThan(0, 4));
        assertEquals(2, announced.get());
    }
}
