package org.eslm.action;

/**
 * Keeps one node's listing to a share of one core ({@code locks.listing.max_busy},
 * docs/ARCHITECTURE.md "Listing"). A page that took {@code t} moves the earliest start of the
 * node's next page to {@code t × (1 − share) / share} after it ended, so a lister paging back to
 * back keeps the listing thread busy at most {@code share} of the time and leaves the cores to
 * lock requests; a lone page, or one after a pause, starts at once. Times are
 * {@link System#nanoTime()} readings, passed in so the arithmetic is testable.
 */
final class ListingPace {
    private long readyAt;

    /** A pace whose first page may start at once, from {@code now}. */
    ListingPace(long now) {
        this.readyAt = now;
    }

    /**
     * How many milliseconds a page that would start at {@code now} must wait, rounded up; 0 when
     * it may start. Whole milliseconds because the thread pool's scheduler counts in them: a wait
     * of 0.7 ms handed to it as nanoseconds runs at once, finds the page still early, and
     * schedules again, in a loop until the page is due (bench/RESULTS.md, "Listing a million
     * held locks", run 6).
     */
    synchronized long delayMillis(long now) {
        long nanos = readyAt - now;
        return nanos <= 0 ? 0 : (nanos + 999_999) / 1_000_000;
    }

    /** Counts a page that ran from {@code start} to {@code end} under the share {@code maxBusy} (0..1]. */
    synchronized void pageTook(long start, long end, double maxBusy) {
        long took = Math.max(0, end - start);
        long rest = (long) (took * (1 - maxBusy) / maxBusy);
        if (end + rest - readyAt > 0) {
            readyAt = end + rest;
        }
    }
}
