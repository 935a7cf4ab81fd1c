package org.eslm.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import org.eslm.client.internal.Durations;
import org.eslm.client.internal.Futures;

/**
 * A leader election (docs/API.md "Elections"), from {@link Locking#election}: campaign in it as
 * this owner (or under this session), read its state, observe its term, or run a {@link
 * LeaderLoop}. A campaign takes the options' wait (how long to queue to be elected), lease and
 * watchdog; elections have no priority, mode or scope, and giving one is refused.
 */
public final class Election {
    /** Longest published value, in UTF-8 bytes (docs/API.md "Elections"). */
    static final int MAX_VALUE_BYTES = 1024;

    private static final Duration WITHDRAW_WITHIN = Duration.ofSeconds(5);
    private static final Duration WITHDRAW_POLL = Duration.ofMillis(50);

    private final Locking locking;
    private final String name;

    Election(Locking locking, String name) {
        this.locking = Objects.requireNonNull(locking, "locking");
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("[name] must not be empty");
        }
        this.name = name;
    }

    public String name() {
        return name;
    }

    /** Who campaigns in a leader loop: its client's shared owner (see {@link #leaderLoop}). */
    String candidate() {
        return locking.owner();
    }

    /**
     * Campaigns and waits up to the options' wait to be elected, publishing {@code value} (null
     * for none). A candidate that already leads gets its leadership back (same term).
     *
     * @throws org.eslm.client.errors.LockConflictException someone leads, with {@link AcquireOptions#tryOnce()}
     * @throws org.eslm.client.errors.LockWaitTimeoutException not elected within the wait
     */
    public Leadership campaign(String value, AcquireOptions options) {
        return Sync.await(campaignAsync(value, options));
    }

    /** {@link #campaign} without blocking a thread while queued; cancelling aborts the campaign. */
    public CompletableFuture<Leadership> campaignAsync(String value, AcquireOptions options) {
        checkCampaign(value, options);
        long sentAt = System.nanoTime();
        String candidate = locking.nextOwner();
        String acquisition = locking.acquisitionFor(
                candidate, List.of(new LockTarget(name, LockMode.EXCLUSIVE, LockScope.ELECTION)));
        CompletableFuture<Leadership> campaigning = Futures.compose(
                locking.shared().requests().campaign(candidate, acquisition, name, value, options, locking.sessionId()),
                answer -> locking.handOver(candidate, acquisition, Grant.elected(answer), options, sentAt)
                        .thenApply(lock -> new Leadership(
                                lock,
                                answer.path("value").isTextual()
                                        ? answer.get("value").asText()
                                        : null)),
                Leadership::closeAsync);
        locking.shared().events().watchAcquire(name, LockScope.ELECTION, sentAt, campaigning);
        return campaigning;
    }

    /**
     * Makes sure this candidate neither leads nor is queued (within a few seconds): after a
     * campaign was aborted, the server may have elected it just before the abort arrived, or not
     * yet dropped its waiter. Resigns the term it leads, by that term.
     */
    void withdraw() {
        long deadline = System.nanoTime() + WITHDRAW_WITHIN.toNanos();
        String me = candidate();
        while (System.nanoTime() < deadline) {
            ElectionState now = state();
            if (now.leader().filter(me::equals).isPresent()) {
                Sync.await(locking.shared().requests().release(me, name, LockScope.ELECTION, now.term()));
            } else if (!now.candidates().contains(me)) {
                return;
            } else {
                LockSupport.parkNanos(WITHDRAW_POLL.toNanos()); // its waiter is being dropped
            }
        }
    }

    /** The state now ({@code GET /_elections/{name}}). */
    public ElectionState state() {
        return Sync.await(locking.shared().requests().election(name).thenApply(ElectionState::of));
    }

    /**
     * Waits at most {@code wait} until the term is not {@code term} (0: no leader known, so it
     * waits for the first): the state, {@link ElectionState#changed()} false if the wait ran out.
     */
    public ElectionState observe(long term, Duration wait) {
        return Sync.await(observeAsync(term, wait));
    }

    public CompletableFuture<ElectionState> observeAsync(long term, Duration wait) {
        if (term < 0) {
            throw new IllegalArgumentException("[term] must be a term (0 for none), got [" + term + "]");
        }
        long waitMs = Durations.millis(wait, "wait");
        return locking.shared()
                .requests()
                .watch(name, LockScope.ELECTION, term, waitMs)
                .thenApply(ElectionState::of);
    }

    /**
     * A leader loop of this election (not started): campaigns in rounds of the options' wait,
     * runs {@code work} while leader and interrupts it when the leadership is lost. Each loop
     * campaigns under a candidate of its own (this owner and a random suffix), so two loops of
     * one client never share a leadership; hence a client's election, not a session's.
     */
    public LeaderLoop leaderLoop(String value, AcquireOptions options, LeaderLoop.Work work) {
        if (!(locking instanceof LockClient client)) {
            throw new IllegalStateException("a leader loop campaigns as a candidate of its own: start it from a"
                    + " LockClient's election, not a session's");
        }
        checkCampaign(value, options);
        if (options.maxWait() == null || options.triesOnce()) {
            throw new IllegalArgumentException(
                    "[wait] of a leader loop's campaign rounds must be a duration longer than zero");
        }
        Election own =
                client.withOwner(client.owner() + "/" + UUID.randomUUID()).election(name);
        return new LeaderLoop(own, value, options, Objects.requireNonNull(work, "work"));
    }

    private static void checkCampaign(String value, AcquireOptions options) {
        Objects.requireNonNull(options, "options");
        if (value != null && value.getBytes(StandardCharsets.UTF_8).length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("[value] must be at most " + MAX_VALUE_BYTES + " bytes (UTF-8)");
        }
        if (options.priority() != null || options.mode() != LockMode.EXCLUSIVE || options.scope() != LockScope.KEY) {
            throw new IllegalArgumentException("[options] of a campaign take wait, lease and watchdog only: an"
                    + " election has no priority, mode or scope");
        }
    }

    @Override
    public String toString() {
        return "election [" + name + "], as [" + locking.owner() + "]";
    }
}
