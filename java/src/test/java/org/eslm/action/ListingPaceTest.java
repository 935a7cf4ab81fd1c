package org.eslm.action;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ListingPaceTest {
    private static final long MS = 1_000_000;

    @Test
    void aLonePageStartsAtOnce() {
        ListingPace pace = new ListingPace(100 * MS);
        assertEquals(0, pace.delayMillis(100 * MS));
        assertEquals(0, pace.delayMillis(500 * MS));
    }

    @Test
    void aPageRightAfterAnotherWaitsSoTheThreadIsBusyAtMostTheShare() {
        ListingPace pace = new ListingPace(0);
        pace.pageTook(0, 4 * MS, 0.5);
        assertEquals(4, pace.delayMillis(4 * MS), "half busy: as long idle as the page took");
        assertEquals(1, pace.delayMillis(7 * MS));
        assertEquals(0, pace.delayMillis(8 * MS));

        pace.pageTook(8 * MS, 10 * MS, 0.25);
        assertEquals(6, pace.delayMillis(10 * MS), "a quarter busy: three times the page idle");
    }

    @Test
    void aShareOfOneNeverDelays() {
        ListingPace pace = new ListingPace(0);
        pace.pageTook(0, 50 * MS, 1.0);
        assertEquals(0, pace.delayMillis(50 * MS));
    }

    @Test
    void aShortPageDoesNotShortenAWaitAlreadyOwed() {
        ListingPace pace = new ListingPace(0);
        pace.pageTook(0, 10 * MS, 0.5); // ready at 20 ms
        pace.pageTook(10 * MS, 11 * MS, 0.5); // would be ready at 12 ms
        assertEquals(9, pace.delayMillis(11 * MS));
    }

    @Test
    void aWaitShorterThanAMillisecondIsAWholeMillisecond() {
        // The scheduler counts whole milliseconds: 0.3 ms must not become 0 (run at once, find
        // the page still early, schedule again: a busy loop).
        ListingPace pace = new ListingPace(0);
        pace.pageTook(0, 1 * MS, 0.5); // ready at 2 ms
        assertEquals(1, pace.delayMillis(2 * MS - 300_000));
        assertEquals(1, pace.delayMillis(2 * MS - 1));
        assertEquals(2, pace.delayMillis(1 * MS - 1), "1 ms and a nanosecond is 2 ms");
    }
}
