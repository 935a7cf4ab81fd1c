package org.eslm.client;

import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eslm.client.errors.InvalidLockRequestException;
import org.eslm.client.errors.LockConflictException;
import org.junit.jupiter.api.Test;

/**
 * Leader elections (docs/API.md "Elections") through the client against a real node: a
 * leadership handed over at close, leader loops taking turns (an in-test ledger of who believes to
 * lead: never two at once, terms strictly increasing), the work interrupted within a second of
 * losing its leadership, and bad arguments refused.
 *
 * <p>How a leadership is ended from outside: as an operator evicts a dead leader, with {@code POST
 * /_locks/{name}/_force_release} and scope {@code election} (docs/API.md "Administration"); the
 * loop learns it through its loss watch.
 */
class ElectionTest extends NodeTest {
    private static final AcquireOptions ROUNDS =
            AcquireOptions.defaults().withWait(Duration.ofSeconds(2)).withLease(Duration.ofSeconds(60));

    /** Who believes to lead, with their terms; overlaps and terms out of order are recorded. */
    static final class Ledger {
        private final Map<String, Long> leading = new ConcurrentHashMap<>();
        final List<Long> terms = new ArrayList<>();
        final List<String> overlaps = new ArrayList<>();
        final List<String> termErrors = new ArrayList<>();

        synchronized void enter(Leadership lead) {
            if (!leading.isEmpty()) {
                overlaps.add(lead + " while " + leading);
            }
            if (!terms.isEmpty() && lead.term() <= terms.get(terms.size() - 1)) {
                termErrors.add(lead + " after term " + terms.get(terms.size() - 1));
            }
            leading.put(lead.candidate(), lead.term());
            terms.add(lead.term());
        }

        synchronized void leave(Leadership lead) {
            leading.remove(lead.candidate());
        }

        synchronized int count() {
            return terms.size();
        }
    }

    private static int evictLeader(String name, Leadership lead) {
        String body = "{\"scope\":\"election\",\"reason\":\"test: leader " + lead.term() + " evicted\"}";
        return RealNode.http(rest, "POST", "/_locks/" + name + "/_force_release", body)
                .status();
    }

    @Test
    void aLeadershipLeadsAndItsCloseElectsTheQueuedCandidate() throws Exception {
        String name = uniqueKey("election");
        Election mine = locks.election(name);
        Election theirs = owner("b").election(name);
        CompletableFuture<Leadership> queued;
        long term;
        try (Leadership lead = mine.campaign("10.0.0.7:5432", AcquireOptions.defaults())) {
            term = lead.term();
            assertTrue(term > 0);
            assertEquals(Optional.of("10.0.0.7:5432"), lead.value());
            assertThrows(
                    LockConflictException.class,
                    () -> theirs.campaign(null, AcquireOptions.defaults().tryOnce()));
            queued = theirs.campaignAsync(null, AcquireOptions.defaults().withWait(Duration.ofSeconds(20)));
            RealNode.await(() -> mine.state().candidates().size() == 1, Duration.ofSeconds(10), "b queued");
            ElectionState state = mine.state();
            assertEquals(Optional.of(locks.owner()), state.leader());
            assertEquals(term, state.term());
            assertEquals(Optional.of("10.0.0.7:5432"), state.value());
        }
        try (Leadership next = queued.get(10, TimeUnit.SECONDS)) {
            assertTrue(next.term() > term, "the resignation elected the queued candidate");
            ElectionState observed = mine.observe(0, Duration.ofSeconds(1));
            assertTrue(observed.changed());
            assertEquals(next.term(), observed.term());
        }
        assertEquals(Optional.empty(), mine.state().leader());
    }

    @Test
    void loopsLeadOneAtATimeWithIncreasingTerms() {
        String name = uniqueKey("election");
        Ledger ledger = new Ledger();
        List<LeaderLoop> loops = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            loops.add(locks.election(name).leaderLoop(null, ROUNDS, lead -> {
                ledger.enter(lead);
                try {
                    TimeUnit.MILLISECONDS.sleep(50); // hold a moment so overlaps would show
                } finally {
                    ledger.leave(lead);
                }
            }));
        }
        try {
            loops.forEach(LeaderLoop::start);
            RealNode.await(() -> ledger.count() >= 9, Duration.ofSeconds(30), "nine leaderships");
        } finally {
            loops.forEach(loop -> assertTrue(loop.stop(Duration.ofSeconds(30))));
        }
        assertEquals(List.of(), ledger.overlaps);
        assertEquals(List.of(), ledger.termErrors);
        Set<Long> led = new HashSet<>();
        loops.forEach(loop -> {
            assertFalse(loop.terms().isEmpty(), loop + " led");
            assertEquals(Optional.empty(), loop.failure());
            led.addAll(loop.terms());
        });
        assertEquals(ledger.count(), led.size());
        // A grant that met a stop in flight is given back by the server once the aborted request
        // is seen, moments later; a leadership left behind would stay for its 60 s lease. Half of it
        // tells the two apart: CI, five test lanes on two cores, once took more than 5 s to see it.
        RealNode.await(
                () -> locks.election(name).state().leader().isEmpty(),
                Duration.ofSeconds(30),
                "the stopped loops resigned");
    }

    @Test
    void theWorkIsInterruptedWithinASecondOfLosingAndTheLoopCampaignsAgain() {
        String name = uniqueKey("election");
        Map<Long, Long> interruptedAt = new ConcurrentHashMap<>();
        LeaderLoop.Work work = lead -> {
            try {
                TimeUnit.SECONDS.sleep(60);
            } catch (InterruptedException e) {
                interruptedAt.put(lead.term(), System.nanoTime());
                throw e;
            }
        };
        LeaderLoop a = locks.election(name).leaderLoop(null, ROUNDS, work).start();
        LeaderLoop b = locks.election(name).leaderLoop(null, ROUNDS, work).start();
        try {
            RealNode.await(
                    () -> a.leadership().isPresent() || b.leadership().isPresent(), Duration.ofSeconds(10), "a leader");
            LeaderLoop leader = a.leadership().isPresent() ? a : b;
            LeaderLoop other = leader == a ? b : a;
            Leadership first = leader.leadership().orElseThrow();
            RealNode.await(
                    () -> locks.election(name).state().candidates().size() == 1,
                    Duration.ofSeconds(10),
                    "the other loop queued");
            long endedAt = System.nanoTime();
            assertEquals(200, evictLeader(name, first));
            RealNode.await(
                    () -> interruptedAt.containsKey(first.term()), Duration.ofSeconds(5), "the work interrupted");
            long tookMs = (interruptedAt.get(first.term()) - endedAt) / 1_000_000;
            assertTrue(tookMs < 1_000, "interrupted " + tookMs + " ms after the leadership ended");
            assertTrue(first.isLost());
            assertTrue(first.lostCause().orElseThrow().getMessage().contains("term ended"));
            RealNode.await(() -> other.leadership().isPresent(), Duration.ofSeconds(10), "the next leader");
            assertTrue(other.leadership().orElseThrow().term() > first.term());
            RealNode.await(
                    () -> locks.election(name).state().candidates().contains(leader.candidate()),
                    Duration.ofSeconds(10),
                    "the loop that lost campaigns again");
        } finally {
            assertTrue(a.stop(Duration.ofSeconds(30)));
            assertTrue(b.stop(Duration.ofSeconds(30)));
        }
    }

    @Test
    void workThatFailsWhileLeadingEndsTheLoopResigned() {
        String name = uniqueKey("election");
        LeaderLoop loop = locks.election(name).leaderLoop(null, ROUNDS, lead -> {
            throw new IllegalStateException("bug in term " + lead.term());
        });
        LeaderLoop.WorkFailedException failed = assertThrows(LeaderLoop.WorkFailedException.class, loop::run);
        assertInstanceOf(IllegalStateException.class, failed.getCause());
        assertEquals(1, loop.terms().size());
        assertEquals(failed.getCause(), loop.failure().orElseThrow());
        assertEquals(Optional.empty(), locks.election(name).state().leader(), "resigned before it was thrown");
    }

    @Test
    void badArgumentsAreRefused() {
        Election election = locks.election(uniqueKey("election"));
        assertThrows(IllegalArgumentException.class, () -> locks.election(""));
        assertThrows(
                IllegalArgumentException.class, () -> election.campaign("x".repeat(1025), AcquireOptions.defaults()));
        assertThrows(
                IllegalArgumentException.class,
                () -> election.campaign(null, AcquireOptions.defaults().withPriority(3)));
        assertThrows(IllegalArgumentException.class, () -> election.observe(-1, Duration.ofSeconds(1)));
        assertThrows(
                IllegalArgumentException.class, () -> election.leaderLoop(null, AcquireOptions.defaults(), lead -> {}));
        try (LockSession session = locks.openSession(Duration.ofSeconds(30))) {
            assertThrows(
                    IllegalStateException.class, () -> session.election("e").leaderLoop(null, ROUNDS, lead -> {}));
        }
        // refused by the server: a lease past locks.lease.max ends the loop with the 400 at once (a
        // round past locks.wait.max is not refused: the client sends it in rounds the server takes)
        LeaderLoop loop = election.leaderLoop(null, ROUNDS.withLease(Duration.ofDays(1000)), lead -> {});
        InvalidLockRequestException refused = assertThrows(InvalidLockRequestException.class, loop::run);
        assertTrue(refused.getMessage().contains("lease"), refused.getMessage());
        assertInstanceOf(InvalidLockRequestException.class, loop.failure().orElseThrow());
        assertEquals(List.of(), loop.terms());
    }
}
