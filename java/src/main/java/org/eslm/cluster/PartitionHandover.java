package org.eslm.cluster;

import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.support.ListenerTimeouts;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.bridge.NativeBounds;
import org.eslm.core.BridgeJson;
import org.eslm.service.OwnershipProtocol;

/**
 * The planned move of a partition between two live nodes (docs/ARCHITECTURE.md "Partitions,
 * owners, epochs", the planned-move row): the previous owner closes the partition and keeps its
 * state a while ({@link #closeAndKeep}), or hands it over when asked ({@link #handOver}); the new
 * owner asks for it ({@link #fetch}), again while that node lives, and a promoted replica asks a
 * live old primary to close ({@link #askToClose}). {@link PartitionManager} decides when; this
 * class carries the state across. Closing stops serving before the state leaves (the core's
 * close does both in one step).
 */
final class PartitionHandover {
    private static final Logger logger = LogManager.getLogger(PartitionHandover.class);

    /**
     * How often the new owner asks a live previous owner for the state before it gives up and
     * starts empty in recovery grace. With {@link #HANDOFF_RETRY} that is about 3 s: long enough
     * for a previous owner that is itself still receiving the partition (a chain of moves) or has
     * not yet applied the cluster state that closes it.
     */
    static final int HANDOFF_ATTEMPTS = 10;
    /**
     * How long a promoted replica's request that the old primary's node close the partition may
     * take ({@link #askToClose}): a live node answers in milliseconds.
     */
    static final TimeValue CLOSE_REQUEST_TIMEOUT = TimeValue.timeValueMillis(NativeBounds.CLOSE_REQUEST_TIMEOUT_MS);
    /** The pause between two hand-over requests to the same previous owner. */
    static final TimeValue HANDOFF_RETRY = TimeValue.timeValueMillis(300);
    /**
     * How long a lost partition's state is kept for its new owner to fetch. The new owner asks as
     * soon as it applies the cluster state that moved the partition, and stops asking after about
     * 3 s ({@link #HANDOFF_ATTEMPTS}); a minute covers a slow cluster-state apply without keeping
     * the state of partitions nobody asks for.
     */
    static final TimeValue HANDED_OFF_RETENTION = TimeValue.timeValueMinutes(1);

    /** What the new owner does with what the previous owner gave. */
    interface Receiver {
        /**
         * The previous owner handed {@code p} over: {@code snapshotJson}, or {@code null} when it
         * gave nothing; {@code oldOwnerClosed} when it answered, so it serves the partition no more.
         */
        void handedOver(int p, long epoch, String snapshotJson, boolean oldOwnerClosed);

        /** {@code p} is not this node's any more: a later cluster state decides again. */
        void notOurs(int p);
    }

    private final Client client;
    private final ThreadPool threadPool;
    private final ClusterService clusterService;
    private final PartitionOwnership ownership;
    /** The core's protocol: whether a request is older than this node's own ownership. */
    private final OwnershipProtocol protocol;
    /** Closes a served partition (stops serving it first), answering its state with {@code true}. */
    private final IntFunction<Map<String, Object>> closeAndExport;
    /** Whether this node is still receiving a partition from its own previous owner. */
    private final IntPredicate receiving;

    /** State of partitions this node lost, kept until the new owner fetches it. */
    private final Map<Integer, Map<String, Object>> handedOff = new ConcurrentHashMap<>();
    /**
     * Makes "close and keep the state" ({@link #closeAndKeep}) and "answer the state"
     * ({@link #handOver}) one step each: without it a hand-over request arriving between the close
     * and the keep found neither an open partition nor a kept state, and the new owner started empty.
     */
    private final Object mutex = new Object();

    PartitionHandover(
            Client client,
            ThreadPool threadPool,
            ClusterService clusterService,
            PartitionOwnership ownership,
            OwnershipProtocol protocol,
            IntFunction<Map<String, Object>> closeAndExport,
            IntPredicate receiving) {
        this.client = client;
        this.threadPool = threadPool;
        this.clusterService = clusterService;
        this.ownership = ownership;
        this.protocol = protocol;
        this.closeAndExport = closeAndExport;
        this.receiving = receiving;
    }

    /** Closes a partition this node lost and keeps its state a while for the new owner to fetch. */
    void closeAndKeep(int p) {
        synchronized (mutex) {
            Map<String, Object> snapshot = closeAndExport.apply(p);
            if (snapshot != null) {
                handedOff.put(p, snapshot);
                threadPool.schedule(() -> handedOff.remove(p, snapshot), HANDED_OFF_RETENTION, threadPool.generic());
            }
        }
    }

    /**
     * The previous owner's side: stop serving {@code partition} now (if still serving it) and
     * answer its state; {@code null} when there is none to hand over. An asker that names its
     * epoch of the partition ({@code askerEpoch}; an older plugin does not) is refused when this
     * node has served the partition in a newer one: its request is out of date, and closing for
     * it would leave the partition without an owner. A partition that opens here in a newer
     * epoch while the refusal is decided may still be closed: that costs the new owner its
     * partition until the master moves it again, never a second owner.
     */
    String handOver(int partition, OptionalLong askerEpoch) {
        if (receiving.test(partition)) {
            return null; // still receiving it from its own previous owner: the asker retries
        }
        Map<String, Object> snapshot;
        boolean served;
        synchronized (mutex) {
            OptionalLong newer = askerEpoch.isPresent()
                    ? protocol.handOverRefused(partition, askerEpoch.getAsLong())
                    : OptionalLong.empty();
            if (newer.isPresent()) {
                logger.info(
                        "lock partition [{}]: refused a hand-over asked in epoch [{}]; this node served it in [{}]",
                        partition,
                        askerEpoch.getAsLong(),
                        newer.getAsLong());
                throw new IllegalStateException("lock partition [" + partition + "] was served in epoch ["
                        + newer.getAsLong() + "], newer than the asker's [" + askerEpoch.getAsLong() + "]");
            }
            served = ownership.serves(partition);
            snapshot = served ? closeAndExport.apply(partition) : handedOff.remove(partition);
        }
        if (served) {
            logger.info("lock partition [{}]: closed here for the node that asked for its state", partition);
        }
        return snapshot == null ? null : BridgeJson.toJson(snapshot);
    }

    /** Takes this node's own kept state of {@code p} back ({@code null}: none); see {@link #keepAgain}. */
    Map<String, Object> takeKept(int p) {
        return handedOff.remove(p);
    }

    /** Keeps {@code snapshot} again, after {@link #takeKept} found it was not for this opening. */
    void keepAgain(int p, Map<String, Object> snapshot) {
        handedOff.put(p, snapshot);
    }

    /**
     * Drops the kept state of {@code p} and runs {@code close} in the same step: after a panic in
     * the core the table may be inconsistent and is handed to nobody.
     */
    void discard(int p, Runnable close) {
        synchronized (mutex) {
            handedOff.remove(p);
            close.run();
        }
    }

    /**
     * A replica promoted while the old primary's node is still in the cluster asks that node once
     * to close, for {@link #CLOSE_REQUEST_TIMEOUT} at most; {@code closedThere} runs when it
     * answered (it serves the partition no more), so the promotion need not wait out its lease. A
     * frozen or cut-off old owner is not waited for: the promotion's wait runs meanwhile
     * (docs/ARCHITECTURE.md "Silent owners").
     */
    void askToClose(int p, long epoch, String previousOwner, Runnable closedThere) {
        PartitionHandoffAction.send(
                client,
                clusterService.state().nodes(),
                previousOwner,
                p,
                epoch,
                ListenerTimeouts.wrapWithTimeout(
                        threadPool,
                        // An answer closed the partition there, unless it is the one given for a
                        // node that left the cluster (nodeGone): then the old lease is waited out.
                        ActionListener.wrap(
                                response -> {
                                    if (stillIn(previousOwner)) {
                                        closedThere.run();
                                    }
                                },
                                e -> logger.info(
                                        "lock partition [{}]: the old owner [{}] did not close it ({}); serving it"
                                                + " from its replicated state once its lease ran out",
                                        p,
                                        previousOwner,
                                        e.getMessage())),
                        CLOSE_REQUEST_TIMEOUT,
                        threadPool.generic(),
                        "lock partition handoff"));
    }

    private boolean stillIn(String node) {
        return clusterService.state().nodes().nodeExists(node);
    }

    /**
     * The new owner's side: asks the live previous owner for the partition's state. No state yet
     * (it is still receiving the partition itself, or has not closed it) or a failed request is
     * retried while that node is alive and the partition still ours: starting empty in the same
     * epoch (a relocation keeps the primary term) would hand out tokens below those already issued.
     */
    void fetch(int p, long epoch, String previousOwner, Receiver receiver) {
        fetch(p, epoch, previousOwner, 1, receiver);
    }

    private void fetch(int p, long epoch, String previousOwner, int attempt, Receiver receiver) {
        PartitionHandoffAction.send(
                client,
                clusterService.state().nodes(),
                previousOwner,
                p,
                epoch,
                ActionListener.wrap(
                        response -> {
                            if (response.stateJson() != null) {
                                receiver.handedOver(p, epoch, response.stateJson(), true);
                            } else {
                                retryFetch(p, epoch, previousOwner, attempt, null, receiver);
                            }
                        },
                        e -> retryFetch(p, epoch, previousOwner, attempt, e, receiver)));
    }

    private void retryFetch(
            int p, long epoch, String previousOwner, int attempt, Exception failure, Receiver receiver) {
        ClusterState state = clusterService.state();
        PartitionTable table = PartitionTable.of(state);
        if (table == null || p >= table.size() || state.nodes().getLocalNodeId().equals(table.owner(p)) == false) {
            receiver.notOurs(p);
            return;
        }
        if (attempt < HANDOFF_ATTEMPTS && state.nodes().nodeExists(previousOwner)) {
            logger.debug(
                    "lock partition [{}]: no state from [{}] yet (attempt {}); retrying", p, previousOwner, attempt);
            threadPool.schedule(
                    () -> fetch(p, epoch, previousOwner, attempt + 1, receiver), HANDOFF_RETRY, threadPool.generic());
            return;
        }
        logger.warn(
                () -> "hand-over of lock partition [" + p + "] from [" + previousOwner + "] gave no state after "
                        + attempt + " attempts",
                failure);
        receiver.handedOver(p, epoch, null, false);
    }
}
