package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.UnaryOperator;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockInterruptedException;
import org.eslm.client.errors.StaleTokenException;
import org.eslm.client.errors.UpdateConflictException;
import org.eslm.client.errors.VersionConflictException;

/**
 * Writes a lock, or no lock, keeps safe (docs/API.md "Fenced writes and optimistic updates"): a
 * held lock's write with its fencing token as the document's external version ({@code
 * version_type=external_gte}), which Elasticsearch itself refuses once a later holder wrote; and an
 * optimistic read-modify-write ({@code if_seq_no} / {@code if_primary_term}) re-applied after a
 * lost race, a bounded number of times with a jittered backoff.
 */
final class Documents {
    /** How many times an optimistic update reads and applies again after losing a race. */
    static final int DEFAULT_RETRIES = 10;

    private static final long BACKOFF_FIRST_MS = 50;
    private static final long BACKOFF_MAX_MS = 1_000;

    private Documents() {}

    /** A fenced write; the document's version after it (the token). */
    static long fencedIndex(Requests requests, String index, String id, Object document, long token) {
        try {
            String fence = "version=" + token + "&version_type=external_gte";
            return Sync.await(requests.putDocument(index, id, fence, document))
                    .path("_version")
                    .asLong();
        } catch (LockException e) {
            if (VersionConflictException.TYPE.equals(e.type())) {
                throw new StaleTokenException(
                        "write of [" + index + "/" + id + "] with fencing token [" + token + "] refused: " + e.reason(),
                        e);
            }
            throw e;
        }
    }

    /** The document as read: its source (null when there is none) and the condition a write of it needs. */
    private record Read(Map<String, Object> source, String condition) {}

    /** See {@link LockClient#optimisticUpdate(String, String, UnaryOperator, int)}. */
    static Map<String, Object> optimisticUpdate(
            Requests requests, String index, String id, UnaryOperator<Map<String, Object>> change, int retries) {
        if (retries < 0) {
            throw new IllegalArgumentException("[retries] must be a whole number of at least 0, got [" + retries + "]");
        }
        for (int attempt = 0; ; attempt++) {
            Read read = read(requests, index, id);
            Map<String, Object> changed = change.apply(read.source() == null ? null : requests.asMap(read.source()));
            if (changed == null || changed.equals(read.source())) {
                return read.source();
            }
            try {
                Sync.await(requests.putDocument(index, id, read.condition(), changed));
                return changed;
            } catch (LockException e) {
                if (!VersionConflictException.TYPE.equals(e.type())) {
                    throw e;
                }
                if (attempt == retries) {
                    throw new UpdateConflictException(
                            "update of [" + index + "/" + id + "] lost its race " + (retries + 1) + " times: "
                                    + e.reason(),
                            e);
                }
                pause(attempt);
            }
        }
    }

    private static Read read(Requests requests, String index, String id) {
        JsonNode got;
        try {
            got = Sync.await(requests.getDocument(index, id));
        } catch (LockException e) {
            if (e.status() == 404) {
                return new Read(null, "op_type=create"); // no document (nor index): create it
            }
            throw e;
        }
        return new Read(
                requests.asMap(got.get("_source")),
                "if_seq_no=" + got.path("_seq_no").asLong() + "&if_primary_term="
                        + got.path("_primary_term").asLong());
    }

    /** 50 ms doubling to 1 s, each delay drawn from its upper half. */
    private static void pause(int attempt) {
        long cap = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS << Math.min(attempt, 10));
        try {
            Thread.sleep(ThreadLocalRandom.current().nextLong(cap / 2, cap + 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockInterruptedException(e);
        }
    }
}
