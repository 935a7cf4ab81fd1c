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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.eslm.client.FencedResult.Outcome;
import org.eslm.client.errors.InvalidLockRequestException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.StaleTokenException;
import org.eslm.client.errors.UpdateConflictException;
import org.eslm.client.errors.VersionConflictException;
import org.eslm.client.internal.Transport;
import org.junit.jupiter.api.Test;

/**
 * Fenced writes, fenced changes and optimistic updates against the real node (docs/API.md "Fenced
 * writes and optimistic updates", "Fenced changes"): a holder whose lock was taken over has its
 * write refused by Elasticsearch itself, whatever the interleaving of its read and write with the
 * next holder's, and concurrent optimistic increments never lose one.
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

    // --- fenced changes (docs/API.md "Fenced changes") ---------------------------------------

    private static final String FENCE = "eslm_fence";

    /** The document as Elasticsearch holds it, fence and all; null when there is none. */
    private static JsonNode stored(String index, String id) {
        RealNode.Answer got = http(rest, "GET", "/" + index + "/_doc/" + id, null);
        return got.status() == 404 ? null : got.body().get("_source");
    }

    private static Map<String, Object> map(Object... pairs) {
        Map<String, Object> map = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put((String) pairs[i], pairs[i + 1]);
        }
        return map;
    }

    /** Waits until the server shows {@code key} free: its holder's lease ran out. */
    private static void leaseRanOut(String key) {
        RealNode.await(() -> !locks.isLocked(key), Duration.ofSeconds(30), "the lease of [" + key + "] to run out");
    }

    @Test
    void aFencedChangeMergesRunsFieldOperationsAndReadModifyWrites() {
        String key = uniqueKey("fenced-change");
        String index = uniqueKey("fenced-changes");
        try (HeldLock held = locks.acquire(key, AcquireOptions.defaults())) {
            assertNull(held.read(index, "d"), "missing: the fenced read leaves a tombstone");
            assertTrue(stored(index, "d").get(FENCE).get("deleted").asBoolean());
            assertEquals(
                    map("status", "new", "meta", map("a", 1)),
                    held.update(index, "d", map("status", "new", "meta", map("a", 1))));
            assertEquals(
                    map("status", "new", "meta", map("a", 1, "b", 2)),
                    held.update(index, "d", map("meta", map("b", 2))));
            Map<String, Object> now = held.update(
                    index,
                    "d",
                    List.of(
                            FieldOp.inc("n"),
                            FieldOp.inc("n", 2),
                            FieldOp.append("log", "x"),
                            FieldOp.set("meta.by", "w1"),
                            FieldOp.remove("status")));
            assertEquals(map("meta", map("a", 1, "b", 2, "by", "w1"), "n", 3, "log", List.of("x")), now);

            List<Map<String, Object>> seen = new ArrayList<>();
            Map<String, Object> tenfold = held.update(index, "d", doc -> {
                seen.add(new HashMap<>(doc));
                doc.put("n", ((Number) doc.get("n")).intValue() * 10);
                return doc;
            });
            assertEquals(List.of(now), seen, "the function got the source the fenced read returned, without the fence");
            assertEquals(30, tenfold.get("n"));
            long version = http(rest, "GET", "/" + index + "/_doc/d", null)
                    .body()
                    .get("_version")
                    .asLong();
            assertEquals(tenfold, held.update(index, "d", doc -> null));
            assertEquals(tenfold, held.update(index, "d", doc -> doc));
            assertEquals(
                    version,
                    http(rest, "GET", "/" + index + "/_doc/d", null)
                            .body()
                            .get("_version")
                            .asLong(),
                    "nothing to write: nothing written");
            InvalidLockRequestException refused = assertThrows(
                    InvalidLockRequestException.class,
                    () -> held.update(index, "d", List.of(FieldOp.inc("n"), FieldOp.inc("log"))));
            assertEquals(400, refused.status());
            assertTrue(refused.reason().contains("[inc] needs a number"), refused.reason());
            assertEquals(tenfold, held.read(index, "d"), "a refused change writes none of its operations");
            assertEquals(
                    held.fencingToken(),
                    stored(index, "d").get(FENCE).get("token").asLong());
            assertEquals(key, stored(index, "d").get(FENCE).get("key").asText());
        }
    }

    @Test
    void aFencedDeleteLeavesATombstoneAndAChangeReCreatesTheDocument() {
        String key = uniqueKey("fenced-delete");
        String index = uniqueKey("fenced-deletes");
        try (HeldLock held = locks.acquire(key, AcquireOptions.defaults())) {
            held.update(index, "d", map("v", 1, "w", 2));
            held.delete(index, "d");
            JsonNode tombstone = stored(index, "d");
            assertEquals(List.of(FENCE), iterable(tombstone.fieldNames()), "nothing but the fence is left");
            assertTrue(tombstone.get(FENCE).get("deleted").asBoolean());
            assertEquals(held.fencingToken(), tombstone.get(FENCE).get("token").asLong());
            assertNull(held.read(index, "d"));
            List<Object> seen = new ArrayList<>();
            held.update(index, "d", doc -> {
                seen.add(doc == null ? "none" : doc);
                return null;
            });
            assertEquals(List.of("none"), seen, "a tombstone reads as no document");
            assertEquals(
                    map("v", 1),
                    held.update(index, "d", List.of(FieldOp.inc("v"))),
                    "re-created from an empty document");
        }
    }

    private static List<String> iterable(java.util.Iterator<String> names) {
        List<String> all = new ArrayList<>();
        names.forEachRemaining(all::add);
        return all;
    }

    @Test
    void aStaleHoldersChangesAreRefusedWhateverTheInterleaving() {
        String key = uniqueKey("fenced-stale");
        String index = uniqueKey("fenced-stale");
        // No watchdog and no loss watch: the first holder does not learn that its lease ran out,
        // as one frozen in a GC pause would not; only the document's fence stands in its way.
        try (LockClient first = builder().lossWatches(0).build()) {
            HeldLock old = first.acquire(
                    key,
                    AcquireOptions.defaults().withLease(Duration.ofSeconds(1)).withWatchdog(false));
            assertEquals(map("n", 1), old.update(index, "n", map("n", 1)));
            old.update(index, "gone", map("v", "old"));
            List<HeldLock> taken = new ArrayList<>();
            StaleTokenException stale = assertThrows(
                    StaleTokenException.class,
                    () -> old.update(index, "n", doc -> {
                        // Between the first holder's read and its write: its lease runs out, and the next
                        // holder takes the lock and counts. The plain recipe would accept the write below.
                        leaseRanOut(key);
                        taken.add(owner("next").acquire(key, AcquireOptions.defaults()));
                        assertEquals(map("n", 2), taken.get(0).update(index, "n", List.of(FieldOp.inc("n"))));
                        return map("n", ((Number) doc.get("n")).intValue() + 1);
                    }));
            HeldLock next = taken.get(0);
            assertTrue(next.fencingToken() > old.fencingToken());
            assertTrue(!old.isLost(), "nothing told the first holder");
            assertEquals(next.fencingToken(), stale.fence().orElseThrow());
            assertEquals(old.fencingToken(), stale.token().orElseThrow());
            assertEquals(StaleTokenException.STALE_TYPE, stale.type());
            assertTrue(stale.getMessage().contains("fence is token [" + next.fencingToken() + "]"), stale.getMessage());
            assertTrue(
                    stale.getMessage().contains("this lock's token is [" + old.fencingToken() + "]"),
                    stale.getMessage());
            assertEquals(
                    map("n", 2), next.read(index, "n"), "the next holder's increment kept, the stale write refused");

            next.delete(index, "gone");
            List<Supplier<Object>> staleCalls = List.of(
                    () -> old.update(index, "n", List.of(FieldOp.inc("n"))),
                    () -> old.update(index, "n", map("n", 0)),
                    () -> old.read(index, "n"),
                    () -> {
                        old.delete(index, "n");
                        return null;
                    },
                    () -> old.update(index, "gone", map("v", "stale")));
            for (Supplier<Object> call : staleCalls) {
                assertThrows(StaleTokenException.class, call::get);
            }
            assertEquals(2, stored(index, "n").get("n").asInt());
            assertEquals(
                    next.fencingToken(),
                    stored(index, "n").get(FENCE).get("token").asLong());
            assertTrue(
                    stored(index, "gone").get(FENCE).get("deleted").asBoolean(),
                    "the stale write did not re-create it");

            List<FencedResult> results = old.bulk(List.of(
                    FencedChange.ops(index, "n", List.of(FieldOp.inc("n"))),
                    FencedChange.doc(index, "fresh", map("v", 1)),
                    FencedChange.delete(index, "gone")));
            assertEquals(List.of(Outcome.STALE, Outcome.APPLIED, Outcome.STALE), outcomes(results));
            assertEquals(next.fencingToken(), results.get(0).fence());
            assertTrue(results.get(0).error() instanceof StaleTokenException
                    && results.get(0).source() == null);
            assertEquals(map("v", 1), results.get(1).source());
            assertEquals(old.fencingToken(), results.get(1).fence());

            results = next.bulk(List.of(
                    FencedChange.ops(index, "n", List.of(FieldOp.inc("n"))),
                    FencedChange.ops(index, "fresh", List.of(FieldOp.append("v", 2))),
                    FencedChange.doc(index, "gone", map("v", "again")),
                    FencedChange.delete(index, "n")));
            assertEquals(List.of(Outcome.APPLIED, Outcome.FAILED, Outcome.APPLIED, Outcome.APPLIED), outcomes(results));
            assertEquals(map("n", 3), results.get(0).source());
            assertTrue(results.get(1).error() instanceof InvalidLockRequestException, String.valueOf(results.get(1)));
            assertTrue(
                    results.get(1).error().reason().contains("[append] needs a list"),
                    results.get(1).error().reason());
            assertEquals(map("v", "again"), results.get(2).source());
            assertNull(results.get(3).source());
            assertEquals(1, stored(index, "fresh").get("v").asInt(), "the failed item wrote nothing");
            next.close();
        }
    }

    private static List<Outcome> outcomes(List<FencedResult> results) {
        return results.stream().map(FencedResult::outcome).toList();
    }

    /** A transport that records the endpoint of every request sent through it. */
    private record Recording(Transport inner, List<String> sent) implements Transport {
        @Override
        public CompletableFuture<Answer> send(String method, String endpoint, String jsonBody, long serverWaitMs) {
            sent.add(endpoint);
            return inner.send(method, endpoint, jsonBody, serverWaitMs);
        }
    }

    @Test
    void aLockKnownLostAndABadChangeSendNothing() {
        String key = uniqueKey("fenced-lost");
        String index = uniqueKey("fenced-lost");
        List<String> sent = Collections.synchronizedList(new ArrayList<>());
        Supplier<List<String>> documentRequests = () -> {
            synchronized (sent) {
                return sent.stream()
                        .filter(e -> e.contains(index) || e.startsWith("/_bulk"))
                        .toList();
            }
        };
        try (LockClient recorded =
                builder().wrapTransport(t -> new Recording(t, sent)).build()) {
            HeldLock held = recorded.acquire(key, AcquireOptions.defaults());
            List<Runnable> bad = List.of(
                    () -> FieldOp.inc("n", Double.NaN),
                    () -> new FieldOp("inc", "n", "1"),
                    () -> new FieldOp("add", "n", 1),
                    () -> FieldOp.set("a..b", 1),
                    () -> FieldOp.set(FENCE + ".token", 9),
                    () -> new FieldOp("remove", "n", 1),
                    () -> held.update(index, "d", map(FENCE, 1)),
                    () -> held.update(index, "d", (Map<String, Object>) null),
                    () -> held.update(index, "d", Collections.singletonList((FieldOp) null)),
                    () -> held.update("", "d", map("v", 1)),
                    () -> held.delete(index, null),
                    () -> FencedChange.doc(index, "d", map(FENCE, 1)));
            for (Runnable call : bad) {
                assertThrows(IllegalArgumentException.class, call::run);
            }
            assertEquals(List.of(), documentRequests.get(), "refused before anything was sent");
            assertEquals(404, http(rest, "GET", "/" + index, null).status());

            assertEquals(200, forceRelease(rest, key).status());
            RealNode.await(held::isLost, Duration.ofSeconds(30), "the loss watch to report the force-release");
            List<Runnable> lostCalls = List.of(
                    () -> held.update(index, "d", map("v", 1)),
                    () -> held.update(index, "d", doc -> doc),
                    () -> held.update(index, "d", List.of(FieldOp.inc("n"))),
                    () -> held.read(index, "d"),
                    () -> held.delete(index, "d"),
                    () -> held.bulk(List.of(FencedChange.delete(index, "d"))));
            for (Runnable call : lostCalls) {
                assertThrows(LockLostException.class, call::run);
            }
            assertEquals(List.of(), documentRequests.get(), "a lock known lost sends nothing");
            assertThrows(LockLostException.class, held::close);
        }
    }
}
