package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;
import org.junit.jupiter.api.Test;

/**
 * One tick at the core's next deadline (docs/ARCHITECTURE.md "Waiting without threads, and time"),
 * driven with a clock and a timer of the test's: a later deadline adds no tick, an earlier one
 * does; a tick moves every served partition, one whose lease is not current is ticked again after
 * {@link TickScheduler#UNSERVED_RECHECK}, a failed partition neither stops the others nor the
 * ticks ({@link TickScheduler#RETRY_AFTER_FAILURE}); once closed, nothing runs.
 */
class TickSchedulerTest {
    /** A task the scheduler handed to the timer, and its delay. */
    private record Scheduled(Runnable task, long delayMs) {}

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final List<Scheduled> timer = new ArrayList<>();
    private final Set<Integer> served = new TreeSet<>(Set.of(0, 1));
    private final List<Integer> ticked = new ArrayList<>();
    private final Set<Integer> unserved = new TreeSet<>();
    private final Set<Integer> failing = new TreeSet<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private final TickScheduler ticks = new TickScheduler(
            (task, delayMs) -> timer.add(new Scheduled(task, delayMs)),
            nanos::get,
            new PartitionGate() {
                @Override
                public boolean serves(int partition) {
                    return served.contains(partition);
                }

                @Override
                public boolean copyLeases() {
                    return true;
                }

                @Override
                public Set<Integer> served() {
                    return served;
                }
            },
            this::tickAnswer,
            closed);

    /** The core's answer to TICK: the partitions not moved on for want of a current lease. */
    private Map<String, Object> tickAnswer(NativeOp op, int partition, String argsJson) {
        assertEquals(NativeOp.TICK, op);
        ticked.add(partition);
        if (failing.contains(partition)) {
            throw new IllegalStateException("partition [" + partition + "] failed");
        }
        List<Integer> left = unserved.contains(partition) ? List.of(partition) : List.of();
        return BridgeField.RESULT.of(BridgeField.UNSERVED.of(left));
    }

    private List<Long> delays() {
        return timer.stream().map(Scheduled::delayMs).toList();
    }

    /** Moves the clock to the first scheduled tick's time and runs it. */
    private void runFirst() {
        Scheduled first = timer.remove(0);
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(first.delayMs()));
        first.task().run();
    }

    @Test
    void aLaterDeadlineAddsNoTickAndAnEarlierOneDoes() {
        ticks.schedule(100);
        ticks.schedule(200);
        ticks.schedule(100);
        assertEquals(List.of(100L), delays(), "one tick for the earliest deadline");
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(30));
        ticks.schedule(80); // 110 ms from the first call: after the scheduled tick
        assertEquals(List.of(100L), delays());
        ticks.schedule(50); // 80 ms from the first call: before it
        assertEquals(List.of(100L, 50L), delays());
        ticks.schedule(0);
        assertEquals(List.of(100L, 50L, 1L), delays(), "at least 1 ms from now");
    }

    @Test
    void aTickMovesEveryServedPartitionAndTheNextDeadlineSchedulesAgain() {
        ticks.schedule(100);
        runFirst();
        assertEquals(List.of(0, 1), ticked);
        assertEquals(List.of(), delays(), "every lease current: the core's next answer says when");
        ticks.schedule(300);
        assertEquals(List.of(300L), delays(), "the tick that ran no longer counts as scheduled");
    }

    @Test
    void aPartitionWhoseLeaseIsNotCurrentIsTickedAgainSoon() {
        unserved.add(1);
        ticks.schedule(100);
        runFirst();
        assertEquals(List.of(TickScheduler.UNSERVED_RECHECK.millis()), delays());
        unserved.clear();
        runFirst();
        assertEquals(List.of(0, 1, 0, 1), ticked);
        assertEquals(List.of(), delays());
    }

    @Test
    void aFailedPartitionDoesNotStopTheOthersNorTheTicks() {
        failing.add(0);
        ticks.schedule(100);
        runFirst();
        assertEquals(List.of(0, 1), ticked, "partition 1 ticked after 0 failed");
        assertEquals(List.of(TickScheduler.RETRY_AFTER_FAILURE.millis()), delays());
        failing.clear();
        runFirst();
        assertEquals(List.of(0, 1, 0, 1), ticked);
    }

    @Test
    void onceClosedNothingIsScheduledAndAScheduledTickDoesNothing() {
        ticks.schedule(100);
        closed.set(true);
        ticks.schedule(10);
        ticks.soon();
        assertEquals(List.of(100L), delays());
        runFirst();
        assertEquals(List.of(), ticked);
    }
}
