package org.eslm.service;

import java.io.Closeable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.support.GroupedActionListener;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeFormat;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;

/**
 * The node's lock service: the one way into the Rust core. It holds no lock logic; it runs each
 * operation on the core and answers the documented REST body (docs/API.md). Its parts, by role:
 * <ul>
 *   <li>{@link CoreClient}: the bridge calls, with native outcomes mapped to Elasticsearch
 *   exceptions by the one table in {@link NativeErrors};</li>
 *   <li>{@link PendingRequests}: requests that wait without a thread, and their cancellation;</li>
 *   <li>{@link TickScheduler}: one tick at the core's next deadline;</li>
 *   <li>a {@link PartitionGate}: which partitions this node serves, with confirmed ownership
 *   (kept by {@code org.eslm.cluster});</li>
 *   <li>{@link GroupCommit}: with {@code locks.durability: replicated}, nothing a change decided
 *   is told to anyone before it reached every in-sync copy of the partition's shard;</li>
 *   <li>{@link PartitionLifecycle} ({@link #lifecycle()}): opening, exporting and closing
 *   partitions, the standby tables this node keeps as a replica, the format the cluster reads;</li>
 *   <li>{@link NodeReports} ({@link #reports()}): stats, diagnostics and the lock history's drain.</li>
 * </ul>
 * What stays here is running operations: at once, or waiting without a thread.
 * See docs/ARCHITECTURE.md "The path of one request" and "Waiting without threads, and time".
 */
public final class LockService implements Closeable {
    private static final Logger logger = LogManager.getLogger(LockService.class);

    private final CoreClient client;
    private final Supplier<String> localNodeName;

    private final PartitionGate partitions;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final PendingRequests pending;
    private final TickScheduler ticks;
    private volatile LockSettings.Values settings;
    /**
     * The highest {@code locks.lease.max} in force on this node since it started: a lease granted
     * under it may still be running after the setting was lowered, so the recovery grace covers it.
     */
    private volatile TimeValue highestLeaseMax;
    /** {@code locks.durability: replicated}: partitions opened here replicate through {@link #commits}. */
    private final boolean replicated;

    private final GroupCommit commits;
    /** This node's shutdown, as the requests it coordinates see it. */
    private final NodeShutdown shutdown;

    private final PartitionLifecycle lifecycle;
    private final NodeReports reports;

    public LockService(
            NativeLockCore core,
            ThreadPool threadPool,
            Supplier<String> localNodeName,
            Supplier<Map<String, Object>> nodeInfo,
            LockSettings.Values settings,
            PartitionGate partitions,
            boolean replicated) {
        this.client = new CoreClient(core);
        this.replicated = replicated;
        // The state format every node of the cluster reads (PartitionLifecycle.peersRead), in which
        // batches are written; this build's until told.
        AtomicInteger peerFormat = new AtomicInteger(NativeFormat.STATE_FORMAT);
        this.commits = new GroupCommit(client, this::handle, this::notServed, peerFormat::get, partitions);
        StandbyTables standbys = new StandbyTables(client);
        this.localNodeName = localNodeName;
        this.shutdown = new NodeShutdown(localNodeName);
        this.settings = settings;
        this.highestLeaseMax = settings.leaseMax();
        this.partitions = partitions;
        CoreCall answer = this::answer;
        this.pending = new PendingRequests(answer, partitions::confirmed);
        this.ticks = new TickScheduler(threadPool, partitions, answer, closed);
        this.lifecycle = new PartitionLifecycle(
                client,
                partitions,
                commits,
                standbys,
                pending,
                replicated,
                closed,
                peerFormat,
                this::handleAfterCommit,
                this::notServed);
        this.reports = new NodeReports(
                answer,
                () -> tickConfirmed(NativeLockCore.ALL_PARTITIONS),
                nodeInfo,
                () -> this.settings,
                pending::size,
                partitions,
                commits,
                standbys);
    }

    /** Opening, exporting and closing partitions in the core (the cluster code's side). */
    public PartitionLifecycle lifecycle() {
        return lifecycle;
    }

    /** Stats, diagnostics and the lock history's drain. */
    public NodeReports reports() {
        return reports;
    }

    /**
     * Sends a heartbeat to the copies of each partition served here that replicated nothing for a
     * while, so they renew this owner's lease (docs/ARCHITECTURE.md "Silent owners").
     */
    public void heartbeats() {
        for (Integer p : partitions.served()) {
            commits.heartbeat(p);
        }
    }

    /** Why this node does not serve {@code partition} now although it owns it: its lease is not current. */
    private String unconfirmed(int partition) {
        String node = "node [" + localNodeName.get() + "]";
        if (partitions.copyLeases()) {
            return node + " has no current lease on lock partition [" + partition + "]: its copies have not"
                    + " acknowledged a batch sent in the last " + LockSettings.COPY_LEASE.getStringRep() + "; retry";
        }
        return node + " cannot confirm with the elected master that it still owns lock partition [" + partition
                + "]; retry";
    }

    /**
     * When to ask again a partition whose lease is not current: with copy leases, the next
     * heartbeat may renew it (a copy just failed, or answering again), so the coordinator retries
     * then instead of waiting for a cluster state that a publication to a silent node may hold
     * back for seconds; without them, on the next cluster state (0: no hint).
     */
    private long retryUnconfirmedMs() {
        return partitions.copyLeases() ? LockSettings.HEARTBEAT_INTERVAL.millis() : 0;
    }

    /** Whether partitions opened here replicate their changes ({@code locks.durability: replicated}). */
    public boolean replicated() {
        return replicated;
    }

    /**
     * Connects replication, whose transport action is built after this service: where batches
     * go, and what gives up a partition whose batch could not reach its copies.
     */
    public void connectReplication(ReplicationChannel channel, IntConsumer onBatchFailure) {
        commits.connect(channel, onBatchFailure);
    }

    /**
     * Who learns that the core panicked in a partition (the cluster code: it closes the partition
     * here and reopens it from its replicated state, docs/RELIABILITY.md "A panic in the core").
     * Called on the thread of the failed call; the listener must not block.
     */
    public void onCorePanic(Consumer<LockCorePanicException> listener) {
        client.onCorePanic(listener);
    }

    /**
     * This node's shutdown (docs/RELIABILITY.md "Stopping a node"): the coordinators track their
     * requests with it; once it has begun, this service refuses partition operations as a
     * partition that moved away does (the asking coordinator retries on the next owner).
     */
    public NodeShutdown shutdown() {
        return shutdown;
    }

    /** The settings in force. */
    public LockSettings.Values settings() {
        return settings;
    }

    /** Pushes changed dynamic settings to the core. @throws IllegalArgumentException when the core refuses them */
    public void applySettings(LockSettings.Values values) {
        answer(NativeOp.CONFIGURE, NativeLockCore.ALL_PARTITIONS, BridgeJson.toJson(values.coreConfig()));
        this.settings = values;
        if (values.leaseMax().compareTo(highestLeaseMax) > 0) {
            highestLeaseMax = values.leaseMax();
        }
    }

    /** The highest {@code locks.lease.max} in force on this node since it started (see {@link LockSettings#recoveryGrace}). */
    public TimeValue highestLeaseMax() {
        return highestLeaseMax;
    }

    /**
     * Runs one operation on {@code partition} ({@link NativeLockCore#ALL_PARTITIONS} for node-wide
     * reads) with the core's arguments {@code args} (taken over: the service may add to it), and
     * completes {@code listener} with the documented REST body: at once, or — for an acquire that
     * queues — when the core grants, times out, picks it as a deadlock victim or drops it. Never
     * blocks the calling thread.
     */
    public void execute(
            NativeOp op,
            int partition,
            Map<String, Object> args,
            Task task,
            ActionListener<Map<String, Object>> listener) {
        if (refusedWhenClosed(listener)) {
            return;
        }
        if (partition != NativeLockCore.ALL_PARTITIONS && (partitions.serves(partition) == false || shutdown.begun())) {
            listener.onFailure(notServed(partition));
            return;
        }
        if (partition != NativeLockCore.ALL_PARTITIONS && partitions.confirmed(partition) == false) {
            // Reads too: a cut-off owner's table may be stale, and a new owner may serve the
            // same keys (docs/ARCHITECTURE.md "Cut-off owners", "Silent owners").
            listener.onFailure(new LockPartitionUnavailableException(unconfirmed(partition), retryUnconfirmedMs()));
            return;
        }
        if (op == NativeOp.KEY_INFO) {
            tickConfirmed(partition);
        }
        switch (op) {
            case ACQUIRE, ACQUIRE_MANY -> acquire(op, partition, args, task, listener);
            case WATCH -> watch(partition, args, task, listener);
            case DIAGNOSTICS -> ActionListener.completeWith(listener, reports::diagnostics);
            default -> run(op, partition, args, listener);
        }
    }

    /**
     * One page of held locks per partition this node serves, filtered by the core's
     * {@code ListFilter} JSON; each lock is kept as the JSON the answer shows
     * ({@link ListedLocks}). A read: confirmed partitions are brought up to now first.
     */
    public void list(String filterJson, ActionListener<List<ListedLocks.Page>> listener) {
        if (refusedWhenClosed(listener)) {
            return;
        }
        tickConfirmed(NativeLockCore.ALL_PARTITIONS);
        List<ListedLocks.Page> pages;
        try {
            ListedLocks.Answer answer =
                    ListedLocks.parse(client.callText(NativeOp.LIST, NativeLockCore.ALL_PARTITIONS, filterJson));
            handle(answer.envelope());
            // Only confirmed partitions, once what their pages show is committed: the listing's
            // coordinator answers 503 when a partition has no page (ListPages).
            pages = answer.pages().stream()
                    .filter(page -> partitions.confirmed(page.partition()))
                    .toList();
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        ActionListener<Void> committed = listener.map(ignored -> pages);
        if (pages.isEmpty() || replicated == false) {
            committed.onResponse(null);
            return;
        }
        GroupedActionListener<Void> all = new GroupedActionListener<>(pages.size(), committed.map(ignored -> null));
        for (ListedLocks.Page page : pages) {
            commits.afterCommit(page.partition(), all);
        }
    }

    /** Fails {@code listener} (503, the node is shutting down) if the service is closed, and says whether it did. */
    private boolean refusedWhenClosed(ActionListener<?> listener) {
        if (closed.get()) {
            listener.onFailure(shutdown.failure());
            return true;
        }
        return false;
    }

    /** An operation answered at once: a read as it stands, a change once it is committed. */
    private void run(
            NativeOp op, int partition, Map<String, Object> args, ActionListener<Map<String, Object>> listener) {
        Map<String, Object> envelope;
        Map<String, Object> body;
        try {
            envelope = callRouted(op, partition, BridgeJson.toJson(args));
            body = BridgeJson.object(BridgeField.RESULT.in(envelope)); // the REST body, as the core wrote it
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        if (partition == NativeLockCore.ALL_PARTITIONS) {
            handle(envelope);
            listener.onResponse(body);
            return;
        }
        // A read waits for the commit too: it may show a change not yet on every copy, which
        // nobody may learn of before it is (docs/ARCHITECTURE.md "Replication").
        afterCommit(
                partition,
                ActionListener.wrap(
                        ignored -> {
                            handle(envelope);
                            listener.onResponse(body);
                        },
                        e -> listener.onFailure(uncommitted(op, body, e))));
    }

    /**
     * The failure of a change whose commit failed. An ending change (release, session end) was
     * applied here and may reach the next owner with a planned move's hand-over: its answer goes
     * along, so that a retry finding nothing left to end can answer it
     * ({@link LockPartitionUnavailableException#withAppliedAnswer}).
     */
    private static Exception uncommitted(NativeOp op, Map<String, Object> body, Exception e) {
        boolean ending = op == NativeOp.RELEASE || op == NativeOp.SESSION_END;
        return ending && e instanceof LockPartitionUnavailableException unavailable
                ? unavailable.withAppliedAnswer(body)
                : e;
    }

    /**
     * Runs {@code listener} once the partition's changes so far are replicated (at once in
     * {@code memory} durability). Replicated but no longer served here (closed after the change):
     * fails it as retryable — the change reached no copy, so nobody may be told of it.
     */
    private void afterCommit(int partition, ActionListener<Void> listener) {
        if (replicated) {
            commits.afterCommit(partition, listener);
        } else {
            listener.onResponse(null);
        }
    }

    /**
     * Brings {@code partition} (every served one with {@link NativeLockCore#ALL_PARTITIONS}) up to
     * now before a read, if its ownership is confirmed. Reads never move the core's time on
     * themselves: on a partition whose owner may be cut off (not confirmed), moving on would
     * expire leases and grant waiters while a new owner may serve the same keys, so such a
     * partition is read as it stands (docs/ARCHITECTURE.md "Cut-off owners").
     */
    private void tickConfirmed(int partition) {
        Iterable<Integer> targets =
                partition == NativeLockCore.ALL_PARTITIONS ? partitions.served() : List.of(partition);
        for (Integer p : targets) {
            if (partitions.confirmed(p) == false) {
                continue;
            }
            try {
                answer(NativeOp.TICK, p, "{}");
            } catch (RuntimeException e) {
                // Closed under us (moving away): the read itself says so, or skips it.
                logger.debug(() -> "tick of lock partition [" + p + "] before a read failed", e);
            }
        }
    }

    private RuntimeException notServed(int partition) {
        return new LockPartitionUnavailableException(
                "lock partition [" + partition + "] is not served by node [" + localNodeName.get()
                        + "] (it is moving); retry",
                0);
    }

    /** A call on one partition; if the partition closed under it, the failure is the retryable one. */
    private Map<String, Object> callRouted(NativeOp op, int partition, String argsJson) {
        try {
            return client.call(op, partition, argsJson);
        } catch (IllegalArgumentException e) {
            if (partition >= 0 && partitions.serves(partition) == false) {
                throw notServed(partition);
            }
            throw e;
        }
    }

    private void acquire(
            NativeOp op,
            int partition,
            Map<String, Object> args,
            Task task,
            ActionListener<Map<String, Object>> listener) {
        PendingRequests.Waitable call = pending.callWaitable(
                op, partition, task, listener, BridgeField.QUEUED, id -> callWith(op, partition, args, id));
        if (call == null) {
            ticks.soon();
        } else if (call.waits()) {
            handleAfterCommit(partition, call.envelope());
        } else {
            // Replicated, a partition closed meanwhile fails the commit (retryable).
            Map<String, Object> body = BridgeJson.object(BridgeField.GRANTED.in(call.result()));
            afterCommit(partition, listener.delegateFailureAndWrap((l, ignored) -> {
                handle(call.envelope());
                l.onResponse(body);
            }));
        }
    }

    /**
     * A watch on one lock (docs/API.md "Watch a lock"): answered at once when the lock with the
     * token is not held (or held and the watch does not wait), else registered like a queued
     * acquire, and answered by its {@code watch_fired} or {@code watch_timed_out} event. It
     * changes no lock, so nothing waits for a commit but the delivery of the events its call
     * caused (the clock moved on).
     */
    private void watch(
            int partition, Map<String, Object> args, Task task, ActionListener<Map<String, Object>> listener) {
        PendingRequests.Waitable call = pending.callWaitable(
                NativeOp.WATCH,
                partition,
                task,
                listener,
                BridgeField.WATCHING,
                id -> callWith(NativeOp.WATCH, partition, args, id));
        if (call == null) {
            return;
        }
        if (call.waits() == false) {
            Map<String, Object> body = BridgeJson.object(BridgeField.ANSWERED.in(call.result()));
            afterCommit(partition, listener.map(ignored -> body)); // the end it reports is committed
        }
        handleAfterCommit(partition, call.envelope());
    }

    /** Runs a request that may wait, carrying the id its later event will name. */
    private Map<String, Object> callWith(NativeOp op, int partition, Map<String, Object> args, long requestId) {
        args.put("request_id", requestId);
        return callRouted(op, partition, BridgeJson.toJson(args));
    }

    /**
     * One bridge call whose events are delivered and whose next tick is scheduled: at once, or,
     * on a replicated partition, once what the call changed is committed.
     */
    private Map<String, Object> answer(NativeOp op, int partition, String argsJson) {
        Map<String, Object> envelope = client.call(op, partition, argsJson);
        handleAfterCommit(partition, envelope);
        return envelope;
    }

    private void handleAfterCommit(int partition, Map<String, Object> envelope) {
        if (partition == NativeLockCore.ALL_PARTITIONS || replicated == false) {
            handle(envelope);
            return;
        }
        // A failed batch gives the partition up: its waiting requests fail with it.
        commits.afterCommit(partition, ActionListener.wrap(ignored -> handle(envelope), e -> {}));
    }

    /** Delivers the events of an answer and schedules the next tick. */
    private void handle(Map<String, Object> envelope) {
        Object events = BridgeField.EVENTS.in(envelope);
        if (events instanceof List<?> list) {
            for (Object event : list) {
                try {
                    pending.dispatch((Map<?, ?>) event);
                } catch (Exception e) {
                    logger.error(() -> "failed to deliver lock event " + event, e);
                }
            }
        }
        if (BridgeField.TICK_IN_MS.in(envelope) instanceof Number inMs) {
            ticks.schedule(inMs.longValue());
        }
    }

    /**
     * An election's body from its lock's answer (docs/API.md "Elections"), renamed by this node's
     * core (rust/lock-jni {@code ops/elections.rs}) where the REST call came in: {@code {"elected":
     * grant}} or {@code {"state": key info, "observed_term"?}}. Touches no partition.
     */
    public Map<String, Object> electionView(Map<String, Object> args) {
        return BridgeJson.object(BridgeField.RESULT.in(
                client.call(NativeOp.ELECTION_VIEW, NativeLockCore.ALL_PARTITIONS, BridgeJson.toJson(args))));
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true) == false) {
            return;
        }
        shutdown.begin();
        pending.failAll(shutdown::failure);
        client.close();
        logger.info("lock core closed");
    }
}
