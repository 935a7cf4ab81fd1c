package org.eslm.cluster;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.bridge.NativeBounds;
import org.eslm.service.LockService;
import org.eslm.service.OwnershipProtocol;

/**
 * What an owner checks every {@link #INTERVAL} (docs/ARCHITECTURE.md "Cut-off owners",
 * "Replication"): that the elected master still names it the owner of its partitions in their
 * epochs (a yes renews its lease where the master's confirmations do, a no gives the partition
 * up: the core's protocol says which), and, when replicated, that every copy the routing table
 * shows has had the whole state from it.
 */
final class OwnerChecks {
    private static final Logger logger = LogManager.getLogger(OwnerChecks.class);
    /** How often owners ask the master to confirm their partitions (the core's bound). */
    static final TimeValue INTERVAL = TimeValue.timeValueMillis(NativeBounds.OWNER_CHECK_INTERVAL_MS);

    private final LockService locks;
    private final PartitionOwnership ownership;
    private final PartitionCopies copies;
    private final ClusterService clusterService;
    private final Client client;
    private final ThreadPool threadPool;
    /** Gives up a partition the master says this node no longer owns. */
    private final IntConsumer denied;

    private final AtomicBoolean started = new AtomicBoolean();

    OwnerChecks(
            LockService locks,
            PartitionOwnership ownership,
            PartitionCopies copies,
            ClusterService clusterService,
            Client client,
            ThreadPool threadPool,
            IntConsumer denied) {
        this.locks = locks;
        this.ownership = ownership;
        this.copies = copies;
        this.clusterService = clusterService;
        this.client = client;
        this.threadPool = threadPool;
        this.denied = denied;
    }

    /** Starts the periodic checks (once). */
    void start() {
        if (started.compareAndSet(false, true)) {
            threadPool.scheduleWithFixedDelay(this::check, INTERVAL, threadPool.generic());
            if (locks.replicated()) {
                threadPool.scheduleWithFixedDelay(
                        locks::heartbeats,
                        TimeValue.timeValueMillis(NativeBounds.HEARTBEAT_INTERVAL_MS),
                        threadPool.generic());
            }
        }
    }

    /** Checks now: a new master was elected, and its confirmation should not wait for the interval. */
    void now() {
        threadPool.generic().execute(this::check);
    }

    private void check() {
        Map<Integer, Long> open = ownership.epochs();
        ClusterState state = clusterService.state();
        if (locks.replicated()) {
            syncNewCopies(state, open);
        }
        String master = state.nodes().getMasterNodeId();
        if (master == null) {
            return;
        }
        // A node that serves nothing asks too, about nothing: the master tells its own cut from an
        // owner's silence by the other nodes' questions (docs/ARCHITECTURE.md "Silent owners").
        long askedUs = locks.ownership().sending();
        client.execute(
                OwnershipCheckAction.TYPE,
                new OwnershipCheckAction.Request(master, state.nodes().getLocalNodeId(), open, state.version()),
                ActionListener.wrap(
                        response -> answered(open, askedUs, response.owned()),
                        e -> logger.debug("could not confirm lock partition ownership with the master", e)));
    }

    /** The master's answers, handed to the core's protocol, which says what each means here. */
    private void answered(Map<Integer, Long> asked, long askedUs, Map<Integer, Boolean> owned) {
        for (Map.Entry<Integer, Boolean> e : owned.entrySet()) {
            int p = e.getKey();
            Long epoch = asked.get(p);
            if (epoch != null
                    && locks.ownership().masterAnswered(p, epoch, askedUs, e.getValue())
                            == OwnershipProtocol.MasterAnswer.GIVE_UP) {
                logger.warn("the master says this node no longer owns lock partition [{}]; closing it", p);
                denied.accept(p);
            }
        }
    }

    /**
     * Sends the whole state of each partition served here to its copies when the routing table
     * shows a copy that has not had it from this node (a new replica, a relocation target), so
     * that every copy holds a standby table before it can take the partition over.
     */
    private void syncNewCopies(ClusterState state, Map<Integer, Long> open) {
        for (Integer p : open.keySet()) {
            if (copies.missing(p, LockShards.otherCopies(state, p))) {
                locks.lifecycle()
                        .syncCopies(
                                p,
                                ActionListener.wrap(
                                        r -> {},
                                        e -> logger.debug(
                                                "lock partition [{}]: syncing new copies failed: {}",
                                                p,
                                                e.getMessage())));
            }
        }
    }
}
