package org.eslm.shedlock.example;

import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A scheduled job that every instance of the application schedules, and only one runs at a time:
 * {@code @SchedulerLock} takes the lock manager's lock {@code shedlock-report} around each run.
 * The counters (one JVM, shared by every instance the test starts) say how it went.
 */
@Component
public class ReportJob {
    /** Runs inside the job now, across instances; at most 1 under the lock. */
    public static final AtomicInteger INSIDE = new AtomicInteger();

    public static final AtomicInteger MOST_INSIDE = new AtomicInteger();
    public static final AtomicInteger RUNS = new AtomicInteger();

    @Scheduled(fixedDelay = 50)
    @SchedulerLock(name = "report", lockAtMostFor = "PT30S")
    public void report() throws InterruptedException {
        MOST_INSIDE.accumulateAndGet(INSIDE.incrementAndGet(), Math::max);
        try {
            Thread.sleep(200); // the report takes a while: another instance's run would overlap it
            RUNS.incrementAndGet();
        } finally {
            INSIDE.decrementAndGet();
        }
    }
}
