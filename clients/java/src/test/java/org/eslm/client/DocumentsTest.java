package org.eslm.client;

import static org.eslm.client.RealNode.forceRelease;
import static org.eslm.client.RealNode.http;
import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.eslm.client.errors.StaleTokenException;
import org.eslm.client.errors.UpdateConflictException;
import org.eslm.client.errors.VersionConflictException;
import org.junit.jupiter.api.Test;

/**
 * Fenced writes and optimistic updates against the real node (docs/API.md "Fenced writes and
 * optimistic updates"): a holder whose lock was taken over has its write refused by Elasticsearch
 * itself, and concurrent optimistic increments never lose one.
 */
class DocumentsTest extends NodeTest {
    private static JsonNode source(String index, String id) {
        return http(rest, "GET", "/" + index + "/_doc/" + id, null).body().get("_source");
    }

    @Test
    void aStaleHoldersWriteIsRefusedAfterATakeover() throws Exception {
        String key = uniqueKey("fenced");
        String index = uniqueKey("fenced-docs");
        // No loss watch and a long lease: the first holder does not learn of the takeover, as a
        // holder frozen in a GC pause would not; only the document's version stands in its way.
        try (LockClient first = builder().lossWatches(0).owner("first-" + key).build()) {
            AcquireOptions longLease = AcquireOptions.defaults().withLease(Duration.ofSeconds(60));
            HeldLock stale = first.acquire(key, longLease);
            assertEquals(stale.fencingToken(), stale.index(index, "d", Map.of("by", "first")));
            assertEquals(200, forceRelease(rest, key).status());
            try (HeldLock fresh = owner("second").acquire(key, longLease)) {
                assertTrue(fresh.fencingToken() > stale.fencingToken());
                fresh.index(index, "d", Map.of("by", "second"));
                StaleTokenException refused =
                        assertThrows(StaleTokenException.class, () -> stale.index(index, "d", Map.of("by", "stale")));
                assertEquals(409, refused.status());
                assertTrue(refused instanceof VersionConflictException);
                assertEquals("second", source(index, "d").get("by").asText());
                assertEquals(fresh.fencingToken(), fresh.index(index, "d", Map.of("by", "second", "n", 2)));
            }
        }
    }

    @Test
    void concurrentOptimisticIncrementsNeverLoseOne() throws Exception {
        String index = uniqueKey("counter");
        int threads = 4;
        int increments = 15;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    for (int i = 0; i < increments; i++) {
                        locks.optimisticUpdate(index, "c", doc -> Map.of("n", count(doc) + 1), 50);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(threads * increments, source(index, "c").get("n").asInt());
    }

    private static int count(Map<String, Object> doc) {
        return doc == null ? 0 : ((Number) doc.get("n")).intValue();
    }

    @Test
    void anUpdateThatChangesNothingWritesNothingAndALostRaceGivesUpTyped() {
        String index = uniqueKey("optimistic");
        assertNull(locks.optimisticUpdate(index, "d", doc -> null), "nothing created");
        assertEquals(Map.of("v", 1), locks.optimisticUpdate(index, "d", doc -> Map.of("v", 1)));
        long version = http(rest, "GET", "/" + index + "/_doc/d", null)
                .body()
                .get("_version")
                .asLong();
        assertEquals(Map.of("v", 1), locks.optimisticUpdate(index, "d", doc -> doc));
        assertEquals(
                version,
                http(rest, "GET", "/" + index + "/_doc/d", null)
                        .body()
                        .get("_version")
                        .asLong());

        List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
        UpdateConflictException gaveUp = assertThrows(
                UpdateConflictException.class,
                () -> locks.optimisticUpdate(
                        index,
                        "d",
                        doc -> {
                            // Another writer gets in between this read and its write, every time.
                            int v = ((Number) doc.get("v")).intValue();
                            seen.add(v);
                            http(rest, "PUT", "/" + index + "/_doc/d", "{\"v\":" + (v + 100) + "}");
                            return Map.of("v", v + 1);
                        },
                        2));
        assertEquals(409, gaveUp.status());
        assertEquals(List.of(1, 101, 201), seen, "three reads, each after the racing write before it");
        assertEquals(301, source(index, "d").get("v").asInt());
        assertThrows(IllegalArgumentException.class, () -> locks.optimisticUpdate(index, "d", doc -> doc, -1));
    }
}
