package org.eslm.cluster;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ResourceAlreadyExistsException;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.admin.indices.create.CreateIndexRequest;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.ClusterChangedEvent;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.ClusterStateListener;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.util.concurrent.ThreadContext;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.gateway.GatewayService;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.service.BridgeJson;
import org.eslm.service.LockService;

/**
 * Follows cluster state and makes this node serve exactly the partitions whose primary it holds
 * (docs/ARCHITECTURE.md "Partitions, owners, epochs (cluster-wide correctness)"):
 * <ul>
 *   <li>the elected master creates the lock index when it is missing;</li>
 *   <li>a partition this node gained is opened in epoch = primary term: with the previous
 *   owner's state when that node is still in the cluster (a planned move: relocation, shutdown),
 *   else empty and in recovery grace (the owner died: its leases must run out first), except a
 *   brand-new index (term 1, no previous owner), which needs no grace;</li>
 *   <li>a partition this node lost is closed; its state is kept for the new owner to fetch;</li>
 *   <li>ownership is the started primary and its term, nothing else: a cluster state without an
 *   elected master (an election, or this node cut off) opens and closes nothing; a cut-off owner
 *   stops granting because the master no longer confirms it ({@link PartitionOwnership}).</li>
 * </ul>
 */
public final class PartitionManager implements ClusterStateListener {
    private static final Logger logger = LogManager.getLogger(PartitionManager.class);

    private final LockService locks;
    private final PartitionOwnership ownership;
    private final Client client;
    private final ThreadPool threadPool;
    private final int partitionCount;
    private final TimeValue grace;
    private final AtomicBoolean creatingIndex = new AtomicBoolean();
    private final AtomicBoolean confirming = new AtomicBoolean();
    private final ClusterService clusterService;
    /**
     * How often owners ask the master to confirm their partitions: a sixth of
     * {@link PartitionOwnership#OWNERSHIP_WINDOW}, so a few slow or lost answers do not stop granting.
     */
    static final TimeValue CONFIRM_INTERVAL = TimeValue.timeValueMillis(500);
    /** Partitions being handed over to this node (state requested, not yet open). */
    private final Set<Integer> opening = ConcurrentHashMap.newKeySet();
    /** State of partitions this node lost, kept until the new owner fetches it. */
    private final Map<Integer, Map<String, Object>> handedOff = new ConcurrentHashMap<>();
    /**
     * Makes "close and keep the state" ({@link #lost}) and "answer the state" ({@link #handOver})
     * one step each: without it a hand-over request arriving between the close and the keep
     * found neither an open partition nor a kept state, and the new owner started empty.
     */
    private final Object handOffMutex = new Object();
    /**
     * How often the new owner asks a live previous owner for the state before it gives up and
     * starts empty in recovery grace. With {@link #HANDOFF_RETRY} that is about 3 s: long enough
     * for a previous owner that is itself still receiving the partition (a chain of moves) or has
     * not yet applied the cluster state that closes it.
     */
    static final int HANDOFF_ATTEMPTS = 10;
    /** The pause between two hand-over requests to the same previous owner. */
    static final TimeValue HANDOFF_RETRY = TimeValue.timeValueMillis(300);
    /**
     * How long a lost partition's state is kept for its new owner to fetch. The new owner asks as
     * soon as it applies the cluster state that moved the partition, and stops asking after about
     * 3 s ({@link #HANDOFF_ATTEMPTS}); a minute covers a slow cluster-state apply without keeping
     * the state of partitions nobody asks for.
     */
    static final TimeValue HANDED_OFF_RETENTION = TimeValue.timeValueMinutes(1);

    public PartitionManager(
            LockService locks,
            PartitionOwnership ownership,
            ClusterService clusterService,
            Client client,
            ThreadPool threadPool,
            int partitionCount,
            TimeValue grace) {
        this.locks = locks;
        this.ownership = ownership;
        this.clusterService = clusterService;
        this.client = client;
        this.threadPool = threadPool;
        this.partitionCount = partitionCount;
        this.grace = grace;
    }

    @Override
    public void clusterChanged(ClusterChangedEvent event) {
        if (confirming.compareAndSet(false, true)) {
            threadPool.scheduleWithFixedDelay(this::confirmOwnership, CONFIRM_INTERVAL, threadPool.generic());
        }
        ClusterState state = event.state();
        if (state.nodes().getMasterNodeId() == null
                || state.blocks().hasGlobalBlock(GatewayService.STATE_NOT_RECOVERED_BLOCK)) {
            // No master (an election, or this node is cut off) or a state not yet recovered says
            // nothing about who owns what: ownership is the started primary and its term, and
            // neither changed. Partitions stay open, with their holders and token counters; one
            // whose owner is really cut off stops granting on its own once its last confirmation
            // by the master is older than PartitionOwnership.OWNERSHIP_WINDOW.
            return;
        }
        if (event.nodesDelta().masterNodeChanged()) {
            // A new master after an election: get its confirmation now rather than at the next
            // interval, so the election costs the owner as little of its window as possible.
            threadPool.generic().execute(this::confirmOwnership);
        }
        PartitionTable table = PartitionTable.of(state);
        if (table == null) {
            closeAll("lock index missing");
            if (state.nodes().isLocalNodeElectedMaster()) {
                createIndex();
            }
            return;
        }
        PartitionTable previous = PartitionTable.of(event.previousState());
        String local = state.nodes().getLocalNodeId();
        for (int p = 0; p < table.size(); p++) {
            boolean owned = local.equals(table.owner(p));
            if (owned && ownership.serves(p)) {
                if (table.epoch(p) > ownership.epochs().get(p)) {
                    openPartition(p, table.epoch(p), 0, null); // same node, promoted again: raise the epoch
                }
            } else if (owned) {
                gained(p, table.epoch(p), previous == null ? null : previous.owner(p), state);
            } else if (ownership.serves(p)) {
                lost(p);
            }
        }
    }

    /** Closes a partition this node lost and keeps its state a while for the new owner to fetch. */
    private void lost(int p) {
        synchronized (handOffMutex) {
            Map<String, Object> snapshot = closePartition(p, true);
            if (snapshot != null) {
                handedOff.put(p, snapshot);
                threadPool.schedule(() -> handedOff.remove(p, snapshot), HANDED_OFF_RETENTION, threadPool.generic());
            }
        }
    }

    private void gained(int p, long epoch, String previousOwner, ClusterState state) {
        if (opening.add(p) == false) {
            return;
        }
        String local = state.nodes().getLocalNodeId();
        if (previousOwner != null
                && previousOwner.equals(local) == false
                && state.nodes().nodeExists(previousOwner)) {
            fetch(p, epoch, previousOwner, 1);
        } else {
            // No live previous owner: a brand-new index needs no grace; otherwise the owner died.
            open(p, epoch, epoch <= 1 && previousOwner == null ? 0 : grace.millis(), null);
        }
    }

    /**
     * Asks the live previous owner for the partition's state. No state yet (it is still receiving
     * the partition itself, or has not closed it) or a failed request is retried while that node
     * is alive and the partition still ours: starting empty in the same epoch (a relocation keeps
     * the primary term) would hand out tokens below those already issued.
     */
    private void fetch(int p, long epoch, String previousOwner, int attempt) {
        client.execute(
                PartitionHandoffAction.TYPE,
                new PartitionHandoffAction.Request(previousOwner, p),
                ActionListener.wrap(
                        response -> {
                            if (response.snapshotJson() != null) {
                                open(p, epoch, 0, response.snapshotJson());
                            } else {
                                retryFetch(p, epoch, previousOwner, attempt, null);
                            }
                        },
                        e -> retryFetch(p, epoch, previousOwner, attempt, e)));
    }

    private void retryFetch(int p, long epoch, String previousOwner, int attempt, Exception failure) {
        ClusterState state = clusterService.state();
        PartitionTable table = PartitionTable.of(state);
        if (table == null || p >= table.size() || state.nodes().getLocalNodeId().equals(table.owner(p)) == false) {
            opening.remove(p); // not ours any more; a later cluster state decides again
            return;
        }
        if (attempt < HANDOFF_ATTEMPTS && state.nodes().nodeExists(previousOwner)) {
            logger.debug(
                    "lock partition [{}]: no state from [{}] yet (attempt {}); retrying", p, previousOwner, attempt);
            threadPool.schedule(() -> fetch(p, epoch, previousOwner, attempt + 1), HANDOFF_RETRY, threadPool.generic());
            return;
        }
        logger.warn(
                () -> "hand-over of lock partition [" + p + "] from [" + previousOwner + "] gave no state after "
                        + attempt + " attempts; starting empty in recovery grace",
                failure);
        open(p, epoch, grace.millis(), null);
    }

    private void open(int p, long epoch, long graceMs, String snapshotJson) {
        try {
            openPartition(p, epoch, graceMs, snapshotJson == null ? null : BridgeJson.parse(snapshotJson));
        } catch (Exception e) {
            logger.error(() -> "failed to open lock partition [" + p + "]", e);
        } finally {
            opening.remove(p);
        }
    }

    /**
     * Asks the elected master whether this node still owns its open partitions in their epochs;
     * a yes keeps them granting for {@link PartitionOwnership#OWNERSHIP_WINDOW}, a no closes them.
     */
    private void confirmOwnership() {
        Map<Integer, Long> open = ownership.epochs();
        ClusterState state = clusterService.state();
        String master = state.nodes().getMasterNodeId();
        if (open.isEmpty() || master == null) {
            return;
        }
        long askedAt = System.nanoTime();
        client.execute(
                OwnershipCheckAction.TYPE,
                new OwnershipCheckAction.Request(master, state.nodes().getLocalNodeId(), open),
                ActionListener.wrap(
                        response -> {
                            for (Map.Entry<Integer, Boolean> e :
                                    response.owned().entrySet()) {
                                if (e.getValue()) {
                                    ownership.confirm(e.getKey(), askedAt);
                                } else if (ownership.serves(e.getKey())
                                        && open.get(e.getKey())
                                                .equals(ownership.epochs().get(e.getKey()))) {
                                    logger.warn(
                                            "the master says this node no longer owns lock partition [{}]; closing it",
                                            e.getKey());
                                    lost(e.getKey());
                                }
                            }
                        },
                        e -> logger.debug("could not confirm lock partition ownership with the master", e)));
    }

    /**
     * The previous owner's side of a hand-over: stop serving {@code partition} now (if still
     * serving it) and answer its state; {@code null} when there is none to hand over.
     */
    public String handOver(int partition) {
        if (opening.contains(partition)) {
            return null; // still receiving it from its own previous owner: the asker retries
        }
        Map<String, Object> snapshot;
        synchronized (handOffMutex) {
            snapshot = ownership.serves(partition) ? closePartition(partition, true) : handedOff.remove(partition);
        }
        return snapshot == null ? null : BridgeJson.toJson(snapshot);
    }

    private void closeAll(String why) {
        for (Integer p : ownership.epochs().keySet()) {
            logger.warn("stopped serving lock partition [{}]: {}", p, why);
            closePartition(p, false);
        }
    }

    /**
     * Opens {@code partition} in the core (see {@link LockService#openPartition}), then serves
     * it, confirmed: it was opened from the state the master just published.
     */
    private void openPartition(int partition, long epoch, long graceMs, Map<String, Object> snapshot) {
        locks.openPartition(partition, epoch, graceMs, snapshot);
        ownership.opened(partition, epoch);
        logger.info(
                "serving lock partition [{}] in epoch [{}]{}",
                partition,
                epoch,
                snapshot != null ? " (handed over)" : graceMs > 0 ? " after " + graceMs + "ms of recovery grace" : "");
    }

    /**
     * Stops serving {@code partition} (requests stop reaching it at once), then closes it in the
     * core; with {@code export}, answers its state. {@code null} when it was not served.
     */
    private Map<String, Object> closePartition(int partition, boolean export) {
        if (ownership.closed(partition) == false) {
            return null;
        }
        return locks.closePartition(partition, export);
    }

    @SuppressWarnings("try") // the stored context restores the caller's thread context on close
    private void createIndex() {
        if (creatingIndex.compareAndSet(false, true) == false) {
            return;
        }
        ThreadContext threadContext = threadPool.getThreadContext();
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            threadContext.markAsSystemContext();
            CreateIndexRequest request =
                    new CreateIndexRequest(LockIndex.NAME).settings(LockIndex.settings(partitionCount));
            client.admin()
                    .indices()
                    .create(
                            request,
                            ActionListener.wrap(
                                    r -> {
                                        logger.info(
                                                "created lock index [{}] with [{}] partitions",
                                                LockIndex.NAME,
                                                partitionCount);
                                        creatingIndex.set(false);
                                    },
                                    e -> {
                                        creatingIndex.set(false);
                                        if (e instanceof ResourceAlreadyExistsException == false) {
                                            logger.warn("failed to create lock index [" + LockIndex.NAME + "]", e);
                                        }
                                    }));
        }
    }
}
