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
import org.eslm.core.BridgeJson;
import org.eslm.core.CoreClient;
import org.eslm.core.LockCorePanicException;
import org.eslm.settings.LockSettings;

/**
 * The node's lock service: the one way into the Rust core. It holds no lock logic; it runs each
 * operation on the core and answers the documented REST body (docs/API.md). Its parts, by role:
 * <ul>
 *   <li>{@link CoreClient}: the bridge calls, with native outcomes mapped to Elasticsearch
 *   exceptions by the one table in {@link NativeErrors};</li>
 *   <li>{@link PartitionAdmission}: whether a request may reach a partition here (a
 *   {@link PartitionGate}, kept by {@code org.eslm.cluster}, says which partitions this node
 *   serves; whether its right to serve one is current, the core decides at the call);</li>
 *   <li>{@link OwnershipProtocol} ({@link #ownership()}): the events of the core's ownership
 *   protocol, which decides who may serve, and {@link PendingPromotions} ({@link #promotions()}),
 *   the master's promotions while it publishes them;</li>
 *   <li>{@link Deliveries}: a call's events to the waiting requests ({@link PendingRequests}) and
 *   its next deadline to the {@link TickScheduler}; with {@code locks.durability: replicated},
 *   only once the change reached every in-sync copy of the partition's shard ({@link Commits});</li>
 *   <li>{@link Operations}: running an operation, at once or (acquires, watches) waiting
 *   without a thread;</li>
 *   <li>{@link PartitionLifecycle} ({@link #lifecycle()}): opening, exporting and closing
 *   partitions, the standby tables this node keeps as a replica, the format the cluster reads;</li>
 *   <li>{@link NodeReports} ({@link #reports()}): stats, diagnostics and the lock history's drain;</li>
 *   <li>{@link LockMetrics} ({@link #metrics()}): the lock metrics of Elasticsearch's telemetry.</li>
 * </ul>
 * What stays here is the way in: the wiring of those parts, and refusing what may not run.
 * See docs/ARCHITECTURE.md "The path of one request" and "Waiting without threads, and time".
 */
public final class LockService implements Closeable {
    private static final Logger logger = LogManager.getLogger(LockService.class);

    private final CoreClient client;
    private final PartitionGate partitions;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile LockSettings.Values settings;
    /**
     * The highest {@code locks.lease.max} in force on this node since it started: a lease granted
     * under it may still be running after the setting was lowered, so the recovery grace covers it.
     */
    private volatile TimeValue highestLeaseMax;

    /** This node's shutdown, as the requests it coordinates see it. */
    private final NodeShutdown shutdown;

    private final PartitionAdmission admission;
    private final OwnershipProtocol ownership;
    private final PendingPromotions promotions = new PendingPromotions();
    private final Deliveries deliveries;
    private final Operations operations;
    private final PartitionLifecycle lifecycle;
    private final NodeReports reports;
    private final LockMetrics metrics;

    public LockService(
            NativeLockCore core,
            ThreadPool threadPool,
            Supplier<String> localNodeName,
            Supplier<Map<String, Object>> nodeInfo,
            LockSettings.Values settings,
            PartitionGate partitions,
            boolean replicated,
            ReplicationParts replication) {
        this.client = new CoreClient(core);
        this.partitions = partitions;
        this.shutdown = new NodeShutdown(localNodeName);
        this.settings = settings;
        this.highestLeaseMax = settings.leaseMax();
        this.admission =
                new PartitionAdmission(client, partitions, shutdown, localNodeName, replication::persistenceFailure);
        this.ownership = new OwnershipProtocol(client);
        // The state format every node of the cluster reads (PartitionLifecycle.peersRead), in which
        // batches are written; this build's until told.
        AtomicInteger peerFormat = new AtomicInteger(NativeFormat.STATE_FORMAT);
        this.metrics = new LockMetrics(client);
        this.deliveries = new Deliveries(
                client,
                partitions,
                replicated,
                threadPool,
                closed,
                admission::notServed,
                peerFormat::get,
                replication,
                metrics);
        this.operations = new Operations(admission, deliveries);
        Standbys standbys = replication.standbys(client);
        this.lifecycle = new PartitionLifecycle(
                client,
                partitions,
                deliveries.commits(),
                standbys,
                deliveries.pending(),
                replicated,
                closed,
                peerFormat,
                deliveries::handleAfterCommit,
                admission::notServed);
        this.reports = new NodeReports(
                deliveries::answer,
                () -> deliveries.tickServed(NativeLockCore.ALL_PARTITIONS),
                nodeInfo,
                () -> this.settings,
                deliveries.pending()::size,
                deliveries.commits(),
                standbys);
    }

    /** The core's ownership protocol: who may serve which partition (docs/ARCHITECTURE.md "Silent owners"). */
    public OwnershipProtocol ownership() {
        return ownership;
    }

    /** On the master: the promotions it publishes and has not applied yet (where to route meanwhile). */
    public PendingPromotions promotions() {
        return promotions;
    }

    /** Opening, exporting and closing partitions in the core (the cluster code's side). */
    public PartitionLifecycle lifecycle() {
        return lifecycle;
    }

    /** Stats, diagnostics and the lock history's drain. */
    public NodeReports reports() {
        return reports;
    }

    /** The lock metrics of Elasticsearch's telemetry (docs/OPERATIONS.md "Metrics"). */
    public LockMetrics metrics() {
        return metrics;
    }

    /**
     * Sends a heartbeat to the copies of each partition served here that replicated nothing for a
     * while, so they renew this owner's lease (docs/ARCHITECTURE.md "Silent owners").
     */
    public void heartbeats() {
        for (Integer p : partitions.served()) {
            deliveries.commits().heartbeat(p);
        }
    }

    /** Whether partitions opened here replicate their changes ({@code locks.durability: replicated}). */
    public boolean replicated() {
        return deliveries.replicated();
    }

    /**
     * Connects replication, whose transport action is built after this service: where batches
     * go, and what gives up a partition whose batch could not reach its copies.
     */
    public void connectReplication(ReplicationChannel channel, IntConsumer onBatchFailure) {
        deliveries.commits().connect(channel, onBatchFailure);
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
        deliveries.answer(NativeOp.CONFIGURE, NativeLockCore.ALL_PARTITIONS, BridgeJson.toJson(values.coreConfig()));
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
        RuntimeException refusal = admission.refusal(partition);
        if (refusal != null) {
            listener.onFailure(refusal);
            return;
        }
        if (op == NativeOp.KEY_INFO) {
            deliveries.tickServed(partition);
        }
        switch (op) {
            case ACQUIRE, ACQUIRE_MANY -> operations.acquire(op, partition, args, task, listener);
            case WATCH -> operations.watch(partition, args, task, listener);
            case DIAGNOSTICS -> ActionListener.completeWith(listener, reports::diagnostics);
            default -> operations.run(op, partition, args, listener);
        }
    }

    /**
     * One page of held locks per partition this node serves, filtered by the core's
     * {@code ListFilter} JSON; each lock is kept as the JSON the answer shows
     * ({@link ListedLocks}). A read: partitions whose lease is current are brought up to now first.
     */
    public void list(String filterJson, ActionListener<List<ListedLocks.Page>> listener) {
        if (refusedWhenClosed(listener)) {
            return;
        }
        deliveries.tickServed(NativeLockCore.ALL_PARTITIONS);
        List<ListedLocks.Page> pages;
        try {
            ListedLocks.Answer answer =
                    ListedLocks.parse(client.callText(NativeOp.LIST, NativeLockCore.ALL_PARTITIONS, filterJson));
            deliveries.handle(answer.envelope());
            // Only partitions whose lease is current have a page (the core leaves the others out),
            // once what their pages show is committed: the listing's coordinator answers 503 when
            // a partition has no page (ListPages).
            pages = answer.pages();
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        ActionListener<Void> committed = listener.map(ignored -> pages);
        if (pages.isEmpty() || deliveries.replicated() == false) {
            committed.onResponse(null);
            return;
        }
        GroupedActionListener<Void> all = new GroupedActionListener<>(pages.size(), committed.map(ignored -> null));
        for (ListedLocks.Page page : pages) {
            deliveries.afterCommit(page.partition(), all);
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

    /**
     * What the core makes of a request body (rust/lock-jni {@code ops/requests}):
     * {@code {"parsed": ...}} or {@code {"refused": ...}}, see {@code org.eslm.rest.RequestBodies}.
     */
    public Map<String, Object> readRequest(String argsJson) {
        return BridgeJson.object(
                BridgeField.RESULT.in(client.call(NativeOp.READ_REQUEST, NativeLockCore.ALL_PARTITIONS, argsJson)));
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

    /**
     * A fenced change to a protected document (rust/lock-core {@code fence.rs}, docs/API.md "Fenced
     * changes"), for the update script {@code org.eslm.script.FencedUpdateScript}: {@code {"source",
     * "params"}} -> {@code {"write": source}}, {@code {"unchanged": {"fence"}}} or {@code {"stale":
     * {"fence"}}}; a bad param is an {@link IllegalArgumentException} naming it. Touches no partition.
     */
    public Map<String, Object> fence(String argsJson) {
        return BridgeJson.object(
                BridgeField.RESULT.in(client.call(NativeOp.FENCE, NativeLockCore.ALL_PARTITIONS, argsJson)));
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true) == false) {
            return;
        }
        shutdown.begin();
        metrics.close();
        deliveries.pending().failAll(shutdown::failure);
        client.close();
        logger.info("lock core closed");
    }
}
