package org.eslm.client;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockInterruptedException;
import org.eslm.client.errors.LockWaitTimeoutException;

/**
 * Campaigns in an {@link Election} in rounds (each waits at most the options' wait on the
 * server), runs the work while leader, and campaigns again when the work returns (its
 * leadership resigned), until {@link #close() closed}. From {@link Election#leaderLoop}; run it
 * in a thread of its own with {@link #start()}, or in yours with {@link #run()}.
 *
 * <p>The work runs in the loop's thread and is <b>interrupted</b> the moment its leadership is
 * known lost (the loss watch saw the term end, a renewal found it gone, or renewals failed until
 * the lease ran out) or the loop is closed: it must end soon after an interrupt (blocking calls
 * throw {@link InterruptedException}; long computations check {@link Thread#isInterrupted()}
 * or {@link Leadership#isLost()}). What the loop guards against, after the known failures of
 * leader recipes (Curator's LeaderLatch/LeaderSelector, etcd's Campaign): two loops of one
 * process never share a leadership (each its own candidate); a leadership that ended before its
 * watch began is still reported (the observe answers at once for a term no longer current); a
 * campaign never hangs (each round is bounded, and closing aborts it); and work never starts
 * with a leadership already lost, nor runs on after the loss without being interrupted. Work
 * that throws while still leader ends the loop, with its leadership resigned ({@link
 * #failure()}).
 */
public final class LeaderLoop implements AutoCloseable {
    /** What a leader does: runs while {@code leadership} holds; interrupted when it is lost. */
    @FunctionalInterface
    public interface Work {
        void lead(Leadership leadership) throws Exception;
    }

    /** Thrown by {@link #run()} when the work failed while still leader. */
    public static final class WorkFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        WorkFailedException(Leadership lead, Throwable cause) {
            super("the work of " + lead + " failed", cause);
        }
    }

    private enum Phase {
        CAMPAIGN,
        WORK,
        OTHER
    }

    /** Pause before campaigning again after a campaign failed (a 503 beyond retries, no answer). */
    static final long RETRY_PAUSE_MS = 1_000;

    private static final System.Logger LOG = System.getLogger(LeaderLoop.class.getName());

    private final Election election;
    private final String value;
    private final AcquireOptions options;
    private final Work work;
    private final List<Long> terms = new CopyOnWriteArrayList<>();
    private final Object mutex = new Object();
    private boolean stopped; // guarded by mutex
    private Phase phase = Phase.OTHER; // guarded by mutex: what an interrupt would stop
    private Thread runner; // guarded by mutex
    private volatile Leadership current;
    private volatile Throwable failure;

    LeaderLoop(Election election, String value, AcquireOptions options, Work work) {
        this.election = election;
        this.value = value;
        this.options = options;
        this.work = work;
    }

    /** The candidate this loop campaigns as (its client's owner and a suffix of its own). */
    public String candidate() {
        return election.candidate();
    }

    /** The leadership whose work runs now, if any. */
    public Optional<Leadership> leadership() {
        return Optional.ofNullable(current);
    }

    /** The terms this loop led, in order. */
    public List<Long> terms() {
        return List.copyOf(terms);
    }

    /** What ended the loop, if the work failed while leader. */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    /** Runs the loop in a daemon thread of its own. */
    public LeaderLoop start() {
        Thread thread = new Thread(this::runCaught, "eslm-leader-" + election.name());
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    private void runCaught() {
        try {
            run();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "leader loop of " + election + " ended", e);
        }
    }

    /**
     * Runs the loop in this thread until {@link #close()}.
     *
     * @throws WorkFailedException the work failed while leader (its leadership was resigned)
     * @throws LockException a campaign was refused (400: a bad argument)
     */
    public void run() {
        synchronized (mutex) {
            if (runner != null) {
                throw new IllegalStateException("this leader loop already runs");
            }
            runner = Thread.currentThread();
        }
        while (enter(Phase.CAMPAIGN, null)) {
            Leadership lead = campaign();
            if (lead != null) {
                lead(lead);
            }
        }
    }

    /** Enters {@code next} unless stopped; with {@code lead} the leadership whose work it is. */
    private boolean enter(Phase next, Leadership lead) {
        synchronized (mutex) {
            if (stopped) {
                return false;
            }
            phase = next;
            current = lead;
            return true;
        }
    }

    /** Leaves the phase: from here no interrupt is meant for it, and one still pending is cleared. */
    private void leave() {
        synchronized (mutex) {
            phase = Phase.OTHER;
            current = null;
        }
        Thread.interrupted();
    }

    private Leadership campaign() {
        Leadership lead;
        boolean aborted = false;
        try {
            lead = election.campaign(value, options);
        } catch (LockInterruptedException stopping) {
            aborted = true;
            return null;
        } catch (LockWaitTimeoutException | LockConflictException roundOver) {
            return null;
        } catch (LockException failed) {
            if (failed.status() == 400) {
                failure = failed;
                throw failed; // a bad argument: campaigning again would be refused again
            }
            LOG.log(System.Logger.Level.WARNING, "campaign in " + election + " failed: " + failed.getMessage());
            pause();
            return null;
        } finally {
            leave();
            if (aborted) {
                withdraw();
            }
        }
        if (lead.isLost() || !enter(Phase.WORK, lead)) {
            resign(lead);
            return null;
        }
        return lead;
    }

    private void lead(Leadership lead) {
        Thread worker = Thread.currentThread();
        terms.add(lead.term());
        lead.onLost(cause -> interruptWork(lead, worker));
        Throwable failed = null;
        try {
            work.lead(lead);
        } catch (InterruptedException interrupted) {
            // lost or stopped: the interrupt did its job
        } catch (Exception | Error e) {
            failed = e;
        } finally {
            leave();
            resign(lead);
        }
        boolean stopping;
        synchronized (mutex) {
            stopping = stopped;
        }
        if (failed != null && !lead.isLost() && !stopping) {
            failure = failed;
            throw new WorkFailedException(lead, failed);
        }
    }

    /** Interrupts the work of {@code lead} if it still runs (never a later phase). */
    private void interruptWork(Leadership lead, Thread worker) {
        synchronized (mutex) {
            if (current == lead && phase == Phase.WORK) {
                worker.interrupt();
            }
        }
    }

    /** After an aborted campaign: the server may have elected this loop as the abort arrived. */
    private void withdraw() {
        try {
            election.withdraw();
        } catch (LockException e) {
            LOG.log(System.Logger.Level.WARNING, "withdrawing from " + election + " failed: " + e.getMessage());
        }
    }

    private static void resign(Leadership lead) {
        try {
            lead.close();
        } catch (LockException e) {
            LOG.log(System.Logger.Level.DEBUG, "resigning " + lead + ": " + e.getMessage());
        }
    }

    private static void pause() {
        try {
            TimeUnit.MILLISECONDS.sleep(RETRY_PAUSE_MS);
        } catch (InterruptedException e) {
            // stopped: the loop's condition ends it
        }
    }

    /**
     * Stops the loop: a campaign in flight is aborted, the work interrupted and its leadership
     * resigned; waits at most {@code within} for the loop's thread to end (true if it did).
     */
    public boolean stop(Duration within) {
        Thread thread;
        synchronized (mutex) {
            stopped = true;
            thread = runner;
            if (thread != null && phase != Phase.OTHER) {
                thread.interrupt();
            }
        }
        if (thread == null || thread == Thread.currentThread()) {
            return true;
        }
        try {
            thread.join(within.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    /** {@link #stop(Duration)} waiting up to a minute. */
    @Override
    public void close() {
        stop(Duration.ofMinutes(1));
    }

    @Override
    public String toString() {
        return "leader loop of " + election;
    }
}
