package org.eslm.client;

import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.eslm.client.errors.LateGrantException;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.internal.Transport;
import org.junit.jupiter.api.Test;

/**
 * A grant that reaches the client late (issue 27): the lease the client counts on runs from when
 * its request was sent plus the server's {@code waited_ms}, so a grant delivered after its renewal
 * was due is renewed before it is handed over, and is not handed over at all when the renewal
 * finds it gone. The acquire really reaches the node; only its answer is delivered late.
 */
class LateGrantTest extends NodeTest {
    private static final AcquireOptions ONE_SECOND_LEASE =
            AcquireOptions.defaults().withLease(Duration.ofSeconds(1));

    @Test
    void aGrantDeliveredAfterItsLeaseAndTakenMeanwhileIsNotHandedOver() throws Exception {
        String key = uniqueKey("late-lost");
        try (LockClient late = builder()
                .wrapTransport(t -> new LateAcquireAnswers(t, Duration.ofMillis(1500)))
                .build()) {
            CompletableFuture<HeldLock> acquiring = late.acquireAsync(key, ONE_SECOND_LEASE);
            RealNode.await(() -> locks.isLocked(key), Duration.ofSeconds(5), "granted on the server");
            // The grant's lease (1 s) runs out on the server while its answer is held back.
            HeldLock next = owner("next").acquire(key, AcquireOptions.defaults().withWait(Duration.ofSeconds(5)));
            ExecutionException failed =
                    assertThrows(ExecutionException.class, () -> acquiring.get(10, TimeUnit.SECONDS));
            LateGrantException notAcquired = assertInstanceOf(LateGrantException.class, failed.getCause());
            assertInstanceOf(LockConflictException.class, notAcquired, "a busy key to the caller");
            assertTrue(notAcquired.getMessage().contains("not acquired"), notAcquired.getMessage());
            assertEquals(next.owner(), locks.lockInfo(key).holders().get(0).owner(), "the new holder keeps it");
            next.close();
        }
    }

    @Test
    void aGrantDeliveredAfterItsRenewalWasDueIsRenewedThenHandedOver() {
        String key = uniqueKey("late-renewed");
        try (LockClient late = builder()
                .wrapTransport(t -> new LateAcquireAnswers(t, Duration.ofMillis(1500)))
                .build()) {
            // Renewal due a third into the 3 s lease, at ~1 s; the answer arrives at ~1.5 s. Not
            // renewed, ~1.5 s would be left; renewed, nearly 3 s. (A lease of seconds, not of one,
            // so that a renewal the watchdog sends late on a loaded machine still lands in time.)
            try (HeldLock lock = late.acquire(key, AcquireOptions.defaults().withLease(Duration.ofSeconds(3)))) {
                long leaseLeft = locks.lockInfo(key).holders().get(0).leaseMs();
                assertTrue(leaseLeft > 2200, "renewed before it was handed over: " + leaseLeft + " ms left");
                assertFalse(lock.isLost());
                assertHeldThroughout(key, Duration.ofSeconds(4)); // the watchdog renews it after that
            }
        }
        assertFalse(locks.isLocked(key));
    }

    /** Delivers the real answer of every acquire {@code delay} late; other calls as they come. */
    private record LateAcquireAnswers(Transport inner, Duration delay) implements Transport {
        @Override
        public CompletableFuture<Answer> send(String method, String endpoint, String jsonBody, long serverWaitMs) {
            CompletableFuture<Answer> answer = inner.send(method, endpoint, jsonBody, serverWaitMs);
            if (!endpoint.endsWith("/_acquire")) {
                return answer;
            }
            return answer.thenCompose(real -> CompletableFuture.supplyAsync(
                    () -> real, CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS)));
        }
    }
}
