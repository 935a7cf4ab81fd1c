package org.eslm.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The round trips shown in diagnostics: counted since opening, percentiles over the last window. */
class BatchTimesTest {
    @Test
    void noBatchYetShowsACountOfZeroAndNoRoundTrip() {
        Map<String, Object> shown = new BatchTimes().toMap();
        assertEquals(0L, shown.get("batches"));
        assertFalse(shown.containsKey("round_trip_ms"));
    }

    @Test
    void percentilesAreNearestRankInMilliseconds() {
        BatchTimes times = new BatchTimes();
        for (int i = 100; i >= 1; i--) {
            times.record(i * 10_000L); // 0.01 ms .. 1.00 ms, recorded out of order
        }
        Map<String, Object> shown = times.toMap();
        assertEquals(100L, shown.get("batches"));
        assertEquals(Map.of("p50", 0.5, "p99", 0.99, "max", 1.0), shown.get("round_trip_ms"));
    }

    @Test
    void onlyTheLastWindowCountsForPercentilesButEveryBatchIsCounted() {
        BatchTimes times = new BatchTimes();
        for (int i = 0; i < BatchTimes.WINDOW; i++) {
            times.record(5_000_000L); // 5 ms, older than the window once the next ones come
        }
        for (int i = 0; i < BatchTimes.WINDOW; i++) {
            times.record(250_000L);
        }
        Map<String, Object> shown = times.toMap();
        assertEquals(2L * BatchTimes.WINDOW, shown.get("batches"));
        assertEquals(Map.of("p50", 0.25, "p99", 0.25, "max", 0.25), shown.get("round_trip_ms"));
    }
}
